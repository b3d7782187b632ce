/**
 * Finds the HTTP/1.1 requests in the bytes a client sends on one connection,
 * so that the stalling proxy can tell a watch from a list or a write. Only
 * request heads are read; bodies are skipped by their Content-Length. A
 * chunked request body (no client of the cluster sends one) ends the parsing
 * for that connection: its later requests are not seen.
 */

/** One request line as it passed the proxy. */
export interface RequestHead {
  method: string;
  /** Path and query, e.g. /api/v1/persistentvolumeclaims?watch=true&... */
  path: string;
}

const HEAD_END = "\r\n\r\n";
/** A head larger than this is not HTTP from our clients: stop looking. */
const MAX_HEAD = 64 * 1024;

/** The request heads of one connection, fed chunk by chunk in order. */
export class RequestHeadParser {
  // windows-1252 decodes one byte to one character: string offsets are byte offsets.
  readonly #decoder = new TextDecoder("windows-1252");
  #head = "";
  #bodyLeft = 0;
  #gaveUp = false;

  /** False once the stream stopped looking like HTTP/1.1 with sized bodies. */
  get parsing(): boolean {
    return !this.#gaveUp;
  }

  /** The requests whose head ends in this chunk, in order. */
  feed(chunk: Uint8Array): RequestHead[] {
    const found: RequestHead[] = [];
    let text = this.#gaveUp ? "" : this.#decoder.decode(chunk);
    while (text !== "" && !this.#gaveUp) {
      if (this.#bodyLeft > 0) {
        const skipped = Math.min(this.#bodyLeft, text.length);
        this.#bodyLeft -= skipped;
        text = text.slice(skipped);
        continue;
      }
      this.#head += text;
      text = "";
      const end = this.#head.indexOf(HEAD_END);
      if (end < 0) {
        if (this.#head.length > MAX_HEAD) this.#gaveUp = true;
        continue;
      }
      const head = this.#head.slice(0, end);
      text = this.#head.slice(end + HEAD_END.length);
      this.#head = "";
      const request = this.#parseHead(head);
      if (request !== undefined) found.push(request);
    }
    return found;
  }

  #parseHead(head: string): RequestHead | undefined {
    const [requestLine = "", ...headerLines] = head.split("\r\n");
    const [method, path] = requestLine.split(" ");
    if (method === undefined || path === undefined) {
      this.#gaveUp = true;
      return undefined;
    }
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") this.#bodyLeft = Number(value) || 0;
      if (name === "transfer-encoding" && /chunked/i.test(value)) this.#gaveUp = true;
    }
    return { method, path };
  }
}
