/** Kubernetes shows /dev/termination-log as the container's last state message. */
import { writeFileSync } from "node:fs";

/** Writes the reason for exiting where Kubernetes looks for it; silently skipped outside a pod. */
export function writeTerminationLog(message: string, path = "/dev/termination-log"): void {
  try {
    writeFileSync(path, message);
  } catch {
    // Not in a pod (or the file is not writable): the log line says the same.
  }
}
