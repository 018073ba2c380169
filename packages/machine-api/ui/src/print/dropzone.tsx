/** The file of a print form: dropped on the zone, or picked with the file chooser inside it. */

import { useState } from 'preact/hooks';
import { bytes } from '../format';

const ACCEPT = '.stl,.3mf,.obj,.gcode,.gco,.g';

export function DesignDropzone(props: { file: File | null; onChoose: (file: File | undefined) => void }) {
  const { file, onChoose } = props;
  const [dragging, setDragging] = useState(false);
  return (
    <label
      class={`dropzone${dragging ? ' dragging' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        onChoose(event.dataTransfer?.files[0]);
      }}
    >
      <span>
        {file ? (
          <>
            <strong>{file.name}</strong> ({bytes(file.size)})
          </>
        ) : (
          'Drop an STL, 3MF, OBJ or G-code file here, or choose one'
        )}
      </span>
      <input
        type="file"
        name="file"
        accept={ACCEPT}
        onChange={(event) => onChoose((event.currentTarget as HTMLInputElement).files?.[0])}
      />
    </label>
  );
}
