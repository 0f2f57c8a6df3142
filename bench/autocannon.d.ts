// The part of autocannon 8's API the benchmarks use (it ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    amount?: number;
    duration?: number;
    headers?: Record<string, string>;
    requests?: { setupRequest?: (req: Request) => Request }[];
  }
  interface Histogram {
    average: number;
    total: number;
    p50: number;
    p99: number;
  }
  interface Result {
    /** Seconds the run lasted. */
    duration: number;
    '2xx': number;
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
  }
  export default function autocannon(opts: Options): Promise<Result>;
}
