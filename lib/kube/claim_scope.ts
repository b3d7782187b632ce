/**
 * Which claims the claim informer keeps, and which of their annotations.
 * Any tenant may create claims, so the agent keeps only those it may act on:
 * claims of the driver's classes, and, up to a bound, claims whose class does
 * not exist (yet); of each, only the annotations the agent reads. What a
 * class change makes interesting again (a class of the driver created after
 * its claims, a secret template that names another annotation) is fetched
 * by listing the claims again: the informer's owner asks when classChanged()
 * says so.
 */
import { CLAIM_DECISION_ANNOTATIONS } from "../model/keys.ts";
import type { StorageClass } from "../model/objects.ts";
import { BoundedMap, type BoundObserver } from "../queue/bounded.ts";

/** Claims of a class that does not exist that the cache keeps at most. */
export const UNKNOWN_CLASS_CLAIMS_LIMIT = 1000;

/** Names of classes whose claims were dropped that are remembered; past it, any new class relists. */
const DROPPED_CLASSES_LIMIT = 1000;

/** The StorageClasses as the class informer has them. */
export interface ClassView {
  get(name: string): StorageClass | undefined;
  list(): StorageClass[];
}

/** The claim annotation keys a class's parameters name (secrets/references.ts templateAnnotationKeys). */
export type TemplateKeys = (parameters: Record<string, string> | undefined) => string[];

/** The annotation keys kept: the fixed ones and those the driver's classes' templates name. */
function claimAnnotationKeys(
  classes: readonly StorageClass[],
  options: { driverName: string; templateKeys: TemplateKeys },
): Set<string> {
  const keys = new Set(CLAIM_DECISION_ANNOTATIONS);
  for (const storageClass of classes) {
    if (storageClass.provisioner !== options.driverName) continue;
    for (const key of options.templateKeys(storageClass.parameters)) keys.add(key);
  }
  return keys;
}

/** The claim informer's filter, fed by the class informer's changes. */
export class ClaimScope {
  readonly #driverName: string;
  readonly #templateKeys: TemplateKeys;
  readonly #classes: ClassView;
  readonly #limit: number;
  readonly #observer: BoundObserver | undefined;
  /** Keys of the kept claims whose class does not exist. */
  readonly #unknownClass: BoundedMap<string, true>;
  /** Classes some claim of which was dropped: their creation as the driver's must relist. */
  readonly #droppedClasses = new BoundedMap<string, true>(DROPPED_CLASSES_LIMIT);
  #annotationKeys: ReadonlySet<string> = new Set(CLAIM_DECISION_ANNOTATIONS);

  constructor(options: {
    driverName: string;
    templateKeys: TemplateKeys;
    classes: ClassView;
    limit?: number;
    observer?: BoundObserver;
  }) {
    this.#driverName = options.driverName;
    this.#templateKeys = options.templateKeys;
    this.#classes = options.classes;
    this.#limit = options.limit ?? UNKNOWN_CLASS_CLAIMS_LIMIT;
    this.#observer = options.observer;
    this.#unknownClass = new BoundedMap(this.#limit, options.observer);
  }

  /** The only annotation keys a kept claim keeps. */
  get annotationKeys(): ReadonlySet<string> {
    return this.#annotationKeys;
  }

  /** Whether to keep an unbound claim (of this node or of none yet), by its key and class name. */
  keeps(key: string, className: string): boolean {
    const storageClass = className === "" ? undefined : this.#classes.get(className);
    if (storageClass !== undefined) {
      this.#unknownClass.delete(key);
      if (storageClass.provisioner === this.#driverName) return true;
      this.#droppedClasses.set(className, true);
      return false;
    }
    if (this.#unknownClass.has(key) || this.#unknownClass.size < this.#limit) {
      this.#unknownClass.set(key, true);
      return true;
    }
    this.#observer?.evicted();
    this.#droppedClasses.set(className, true);
    return false;
  }

  /** The claim left the cache. */
  forget(key: string): void {
    this.#unknownClass.delete(key);
  }

  /** After a full list: forgets the claims the cache no longer holds. */
  retain(keys: Iterable<string>): void {
    const held = new Set(keys);
    for (const [key] of [...this.#unknownClass.entries()]) {
      if (!held.has(key)) this.#unknownClass.delete(key);
    }
  }

  /**
   * A class was added, changed or deleted (the class informer has it so
   * already): true when the claims must be listed again, because claims of
   * it were dropped and it is now the driver's, or because a template now
   * names an annotation the cache did not keep.
   */
  classChanged(
    change: { key: string; old: StorageClass | undefined; new: StorageClass | undefined },
  ): boolean {
    const before = this.#annotationKeys;
    this.#annotationKeys = claimAnnotationKeys(this.#classes.list(), {
      driverName: this.#driverName,
      templateKeys: this.#templateKeys,
    });
    const newKey = [...this.#annotationKeys].some((key) => !before.has(key));
    const ours = (storageClass: StorageClass | undefined) =>
      storageClass?.provisioner === this.#driverName;
    if (!ours(change.new) || ours(change.old)) return newKey;
    const dropped = this.#droppedClasses.has(change.key) || this.#droppedClasses.evictions > 0;
    this.#droppedClasses.delete(change.key);
    return newKey || dropped;
  }
}
