/** Plain-text tables for a terminal: aligned columns, a rule under the header, no colour. */

export type Align = "left" | "right";

export interface Column {
  header: string;
  align?: Align;
}

/** Renders rows under the headers; every cell is padded to its column's widest value. */
export function renderTable(columns: Column[], rows: string[][]): string {
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => (row[index] ?? "").length))
  );
  const line = (cells: string[]) =>
    cells.map((cell, index) =>
      columns[index]?.align === "right"
        ? cell.padStart(widths[index]!)
        : cell.padEnd(widths[index]!)
    ).join("  ").trimEnd();
  const rule = widths.map((width) => "-".repeat(width)).join("  ");
  return [line(columns.map((column) => column.header)), rule, ...rows.map(line)]
    .map((text) => `  ${text}`).join("\n");
}
