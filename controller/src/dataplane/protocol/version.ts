import { createHash } from 'crypto';

/** A config version: a hash of the file names and contents (stable across replicas). */
export function configVersion(files: Record<string, string>): string {
  const h = createHash('sha256');
  for (const name of Object.keys(files).sort()) {
    h.update(name).update('\0').update(files[name]).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}
