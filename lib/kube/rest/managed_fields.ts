/**
 * Cuts metadata.managedFields out of JSON text from kube-apiserver before it
 * is parsed. No cache of the agent keeps them (lib/kube/trim.ts copies the
 * fields it reads), yet they are over half the bytes of a claim's or PV's
 * watch event once three managers have written it, and most of the objects
 * JSON.parse would allocate (a FieldsV1 trie per manager), to be dropped at
 * once.
 *
 * Why a cut in the text is sound: kube-apiserver writes a built-in kind's
 * ObjectMeta fields in the order of the Go struct
 * (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), managedFields last, in
 * compact JSON. So a cut starts at `,"managedFields":[{`
 * (a `"` after `,` and before a letter opens a string, so this is the key,
 * never text inside a string) and ends at the array's `]`, found as `}]},"`
 * and a letter: the last entry closes, the array closes, metadata closes, the
 * object's next field begins. Inside the array that text cannot occur: a
 * ManagedFieldsEntry has no arrays (FieldsV1 is a trie of objects), so every
 * `]` there is inside a string, where a `"` after `,` can only close the
 * string and be followed by `:`, `,`, `}` or `]`, never a letter. Text that
 * does not have this shape (metadata last in its object, an empty array, no
 * managedFields at all) is left as it is: parsing it whole costs only time.
 *
 * Only for built-in kinds (InformerOptions.cutManagedFields): a custom
 * resource is written from a map, keys sorted, managedFields before name, so
 * a later `}]},"` of its spec could pass for the array's end.
 *
 * Why it stays despite depending on that order: an agent that lists tens of
 * thousands of claims written by several managers spends measurably less CPU
 * getting ready with the cut than parsing them whole
 * (bench/results/ab_house.md); per claim in a burst the saving is below what
 * the benchmarks resolve.
 */

// The key without its `,"`: a search for a rare first letter skips faster than for `,`.
const NAME = 'managedFields":[{';
const CLOSE = ']},"';
const COMMA = 0x2c;
const QUOTE = 0x22;
const BRACE = 0x7d;

/** `json` without the managedFields of the objects in it. */
export function withoutManagedFields(json: string): string {
  let name = json.indexOf(NAME);
  if (name < 0) return json;
  let kept = "";
  let copiedTo = 0;
  while (name >= 0) {
    const from = name + NAME.length;
    const next = json.indexOf(NAME, from);
    // The end found must be this array's: not past the next object's managedFields (a list item
    // whose metadata is its last field has no end of this shape).
    const end = arrayEnd(json, from, next < 0 ? json.length : next);
    const whole = end >= 0 && json.charCodeAt(name - 1) === QUOTE &&
      json.charCodeAt(name - 2) === COMMA;
    if (whole) {
      kept += json.slice(copiedTo, name - 2);
      copiedTo = end + 1;
    }
    name = next;
  }
  return copiedTo === 0 ? json : kept + json.slice(copiedTo);
}

/**
 * The index of the first `]` in [from, until) that is followed by `},"` and a
 * letter, and follows `}`; or -1.
 */
function arrayEnd(json: string, from: number, until: number): number {
  let at = json.indexOf(CLOSE, from);
  while (at >= 0 && at < until) {
    if (json.charCodeAt(at - 1) === BRACE && isAsciiLetter(json.charCodeAt(at + CLOSE.length))) {
      return at;
    }
    at = json.indexOf(CLOSE, at + 1);
  }
  return -1;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
}
