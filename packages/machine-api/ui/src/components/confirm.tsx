/**
 * A button that asks first: a native modal <dialog> (focus moves into it, Esc closes it) with the
 * consequence spelled out, and the action only on the explicit confirm button.
 */

import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

interface Props {
  label: string;
  /** The dialog's question, e.g. "Stop the print on alpha?" */
  question: string;
  /** What happens, in one sentence. */
  detail: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  class?: string;
  disabled?: boolean;
}

export function ConfirmButton(props: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      dialog.current?.close();
    }
  };
  return (
    <>
      <button
        type="button"
        class={props.class}
        disabled={props.disabled || busy}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.question}>
        <h2 class="dialog-title">{props.question}</h2>
        <p>{props.detail}</p>
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()} autofocus>
            Keep going
          </button>
          <button type="button" class="danger" disabled={busy} onClick={confirm}>
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
