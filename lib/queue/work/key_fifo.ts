/** A FIFO of keys with O(1) push and shift (Array#shift is O(n) on long queues). */
export class KeyFifo {
  #items: string[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(key: string): void {
    this.#items.push(key);
  }

  shift(): string | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head++];
    // Compact once the consumed prefix dominates, so memory follows the live length.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}
