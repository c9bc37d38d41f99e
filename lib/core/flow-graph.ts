// The order of a flow's jobs (which refs each one waits for), checked before anything is written.
import { InvalidOptionError } from './errors.js';

/** Refuses a flow whose dependsOn make a cycle: its jobs would wait for each other forever. */
export function assertAcyclic(byRef: Map<string, { index: number; parents: string[] }>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (ref: string, path: string[]): void => {
    if (state.get(ref) === 'done') return;
    if (state.get(ref) === 'visiting') {
      throw new InvalidOptionError(`jobs[${byRef.get(ref)!.index}].dependsOn`, 'refs that do not form a cycle', [...path, ref].join(' -> '));
    }
    state.set(ref, 'visiting');
    for (const parent of byRef.get(ref)!.parents) visit(parent, [...path, ref]);
    state.set(ref, 'done');
  };
  for (const ref of byRef.keys()) visit(ref, []);
}
