/**
 * The explanation of a claim, pure over its snapshot: a one-line verdict
 * first, then the sections, as plain text in a stable order.
 */
import { gatherFacts } from "./facts/facts.ts";
import { type Section, sectionsOf } from "./sections.ts";
import type { ExplainSnapshot } from "./snapshot.ts";
import { verdictOf } from "./verdict.ts";

/** The verdict and the sections. */
interface Explanation {
  verdict: string;
  sections: Section[];
}

/** Explains the snapshot. */
export function explainSnapshot(snapshot: ExplainSnapshot): Explanation {
  const facts = gatherFacts(snapshot);
  return { verdict: verdictOf(facts), sections: sectionsOf(facts) };
}

/** The explanation as text: the verdict, then each section's title and indented lines. */
export function renderExplanation(explanation: Explanation): string {
  const blocks = [explanation.verdict];
  for (const section of explanation.sections) {
    blocks.push([`${section.title}:`, ...section.lines.map((line) => `  ${line}`)].join("\n"));
  }
  return `${blocks.join("\n\n")}\n`;
}
