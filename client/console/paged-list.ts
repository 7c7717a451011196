// A list the API answers page by page ({data, nextCursor}): the rows shown, the next page's cursor, and the error.
import { useState } from 'preact/hooks';
import { api, type Page, type Session } from './api';
import { errorText } from './ui';

/**
 * `load(params)` reads the first page of `path` with those query parameters; `load(params, cursor)` appends the page
 * after `cursor`. `setRows` lets a page change a row in place (a review's answer) without reading the list again.
 */
export function usePagedList<T>(session: Session, path: string) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null | undefined>(null);
  const [error, setError] = useState('');
  const load = async (params: URLSearchParams, cursor?: string) => {
    if (cursor) params.set('cursor', cursor);
    try {
      const page = await api<Page<T>>(session, 'GET', `${path}?${params}`);
      setRows((shown) => (cursor ? [...(shown ?? []), ...page.data] : page.data));
      setNext(page.nextCursor);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  };
  return { rows, setRows, next, error, setError, load };
}
