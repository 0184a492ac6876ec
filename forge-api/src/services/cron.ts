/**
 * Scheduled jobs of this server (Gitea's modules/cron): each task has a schedule in Gitea's
 * notation (`@every 1m`, `@every 24h`, `@midnight`, `@hourly`), runs on a timer in the
 * process, and records its state in the CronTask table (schedule, next, prev, exec_times) that
 * GET /admin/cron lists. POST /admin/cron/{task} runs one now.
 */
import type { Prisma } from './database';

export interface CronJob {
  name: string;
  schedule: string;
  run(): Promise<unknown>;
}

/** Next run after `from` for a schedule; null when the notation is not understood. */
export function nextRun(schedule: string, from: Date): Date | null {
  const s = schedule.trim();
  const every = /^@every\s+(\d+)(ms|s|m|h)$/.exec(s);
  if (every) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[every[2] as 'ms' | 's' | 'm' | 'h'];
    const ms = Number(every[1]) * unit;
    return ms > 0 ? new Date(from.getTime() + ms) : null;
  }
  if (s === '@midnight' || s === '@daily') {
    const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() + 1));
    return d;
  }
  if (s === '@hourly') {
    const d = new Date(from);
    d.setUTCMinutes(0, 0, 0);
    return new Date(d.getTime() + 3_600_000);
  }
  return null;
}

export class CronService {
  private readonly jobs = new Map<string, CronJob>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private started = false;

  constructor(private readonly prisma: Prisma) {}

  register(job: CronJob): void {
    if (nextRun(job.schedule, new Date()) === null) throw new Error(`cron ${job.name}: unsupported schedule ${job.schedule}`);
    this.jobs.set(job.name, job);
  }

  has(name: string): boolean {
    return this.jobs.has(name);
  }

  names(): string[] {
    return [...this.jobs.keys()].sort();
  }

  /** Records every task with its next time and arms the timers. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    // Tasks this server no longer runs are not listed.
    await this.prisma.cronTask.deleteMany({ where: { name: { notIn: this.names() } } });
    for (const job of this.jobs.values()) {
      const next = nextRun(job.schedule, new Date()) as Date;
      await this.prisma.cronTask.upsert({
        where: { name: job.name },
        create: { name: job.name, schedule: job.schedule, nextAt: next },
        update: { schedule: job.schedule, nextAt: next },
      });
      this.arm(job, next);
    }
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.running.values()].map((p) => p.catch(() => undefined)));
  }

  private arm(job: CronJob, at: Date): void {
    const old = this.timers.get(job.name);
    if (old) clearTimeout(old);
    // setTimeout holds at most ~24.8 days; re-arming on wake covers longer waits.
    const wait = Math.min(Math.max(0, at.getTime() - Date.now()), 2 ** 31 - 1);
    const t = setTimeout(() => {
      this.timers.delete(job.name);
      void this.run(job.name).finally(() => {
        if (this.started) this.arm(job, nextRun(job.schedule, new Date()) as Date);
      });
    }, wait);
    t.unref();
    this.timers.set(job.name, t);
  }

  /** Runs a task now (once at a time per task); resolves when it finished. */
  run(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job) return Promise.reject(new Error(`unknown cron task ${name}`));
    const current = this.running.get(name);
    if (current) return current;
    const p = (async () => {
      const started = new Date();
      try {
        await job.run();
      } catch {
        // A failing run is still a run (Gitea counts it); the next one tries again.
      }
      await this.prisma.cronTask
        .upsert({
          where: { name },
          create: { name, schedule: job.schedule, prevAt: started, execTimes: 1, nextAt: nextRun(job.schedule, new Date()) },
          update: { prevAt: started, execTimes: { increment: 1 }, nextAt: nextRun(job.schedule, new Date()) },
        })
        .catch(() => undefined);
    })().finally(() => this.running.delete(name));
    this.running.set(name, p);
    return p;
  }
}
