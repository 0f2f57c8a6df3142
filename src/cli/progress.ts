/** A progress bar on stderr: redrawn in place on a terminal, a line every 10% otherwise. */
export class Progress {
  readonly #total: number;
  readonly #label: string;
  readonly #tty: boolean;
  #done = 0;
  #lastDecile = -1;

  constructor(total: number, label: string, stream: NodeJS.WriteStream = process.stderr) {
    this.#total = total;
    this.#label = label;
    this.#tty = stream.isTTY === true;
    this.#stream = stream;
  }

  readonly #stream: NodeJS.WriteStream;

  tick(n = 1): void {
    this.#done += n;
    const frac = this.#total === 0 ? 1 : this.#done / this.#total;
    if (this.#tty) {
      const width = 30;
      const filled = Math.round(frac * width);
      this.#stream.write(`\r${this.#label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.#done}/${this.#total}`);
      return;
    }
    const decile = Math.floor(frac * 10);
    if (decile !== this.#lastDecile) {
      this.#lastDecile = decile;
      this.#stream.write(`${this.#label} ${this.#done}/${this.#total} (${decile * 10}%)\n`);
    }
  }

  end(): void {
    if (this.#tty) this.#stream.write('\n');
  }
}
