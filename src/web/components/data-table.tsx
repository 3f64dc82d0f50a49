import type { ComponentChildren } from 'preact';

/** One column of a DataTable: its heading and what each row shows in it. */
export interface Column<Row> {
  /** The column's heading (a th with scope="col"). */
  header: ComponentChildren;
  /** The cell of one row. */
  cell: (row: Row) => ComponentChildren;
  /** Classes of the column's cells. */
  class?: string;
}

export interface DataTableProps<Row> {
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  /** Classes of the table itself (`table` draws rules between rows). */
  class?: string;
  /** Inside a `table-wrap`, which scrolls sideways on a narrow screen instead of the page. */
  wrap?: boolean;
}

/**
 * A table of records, a row each: the dashboard's listings, the connected apps, a listing's review
 * history. Headings are column headers for screen readers; the caller says what an empty table
 * shows instead, since that differs by page.
 */
export function DataTable<Row>({ columns, rows, class: classes, wrap }: DataTableProps<Row>) {
  const table = (
    <table class={classes}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col">{column.header}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr>
            {columns.map((column) => (
              <td class={column.class}>{column.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return wrap ? <div class="table-wrap">{table}</div> : table;
}
