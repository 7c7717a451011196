/** What one kind of work's check in `npm run chaos` found: a row of the run's table, and its line in the log. */
export interface WorkCheck {
  total: number;
  completed: number;
  lost: number;
  duplicated: number;
  wrong: number;
  notes: string[];
  summary: string;
}

/** A check of `total` subjects before any is counted. */
export const emptyCheck = (total: number, notes: string[] = []): WorkCheck => ({
  total,
  completed: 0,
  lost: 0,
  duplicated: 0,
  wrong: 0,
  notes,
  summary: '',
});
