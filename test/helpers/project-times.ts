/**
 * A reporter beside vitest's own that ends the run with the time each project took: its files,
 * the sum of their durations (setup, import and tests: what the project costs the pool's workers)
 * and the wall time from its first file's start to its last file's end. The projects' files share
 * the pool, so their spans overlap; the file time is the figure to compare between runs.
 */
import { performance } from 'node:perf_hooks';
import type { Reporter, TestModule } from 'vitest/node';

interface ProjectTimes {
  files: number;
  tests: number;
  fileMs: number;
  firstStart: number;
  lastEnd: number;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(0)} s`;

export default class ProjectTimesReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly projects = new Map<string, ProjectTimes>();
  private runStart = performance.now();

  onTestRunStart(): void {
    this.runStart = performance.now();
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(`${module.project.name}\0${module.moduleId}`, performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const now = performance.now();
    const name = module.project.name || 'default';
    const start = this.started.get(`${module.project.name}\0${module.moduleId}`) ?? now;
    const d = module.diagnostic();
    const times = this.projects.get(name) ?? { files: 0, tests: 0, fileMs: 0, firstStart: start, lastEnd: now };
    times.files += 1;
    times.tests += [...module.children.allTests()].length;
    times.fileMs += d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    times.firstStart = Math.min(times.firstStart, start);
    times.lastEnd = Math.max(times.lastEnd, now);
    this.projects.set(name, times);
  }

  onTestRunEnd(): void {
    if (this.projects.size === 0) return;
    const lines = ['', 'Time per project (file time: the sum of its files\' durations; span: first start to last end)'];
    for (const [name, t] of [...this.projects].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`  ${name.padEnd(16)} ${String(t.files).padStart(4)} files ${String(t.tests).padStart(5)} tests   file time ${seconds(t.fileMs).padStart(7)}   span ${seconds(t.lastEnd - t.firstStart).padStart(7)} (from ${seconds(t.firstStart - this.runStart)})`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
