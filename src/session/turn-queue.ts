/** The turns of one session run one at a time, in arrival order; different sessions in parallel. */
export class TurnQueue {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves with the function that lets the next turn run, once every earlier turn let go. */
  async acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const previous = this.#tail;
    this.#tail = previous.then(() => mine);
    await previous;
    return release;
  }
}
