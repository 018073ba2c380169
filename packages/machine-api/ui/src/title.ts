import { useEffect } from 'preact/hooks';

/** Sets the document title for the page shown (screen readers announce it on navigation). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · machine-api`;
  }, [title]);
}
