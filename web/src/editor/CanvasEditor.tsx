/** The canvas editor at /create and /create/:id. */
import { ReactFlowProvider } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useParams } from 'react-router';
import { EditorCanvas } from './EditorCanvas';
import { EditorProvider } from './EditorContext';
import { EditorTopBar } from './EditorTopBar';
import { FlowLoader } from './FlowLoader';
import './editor.css';

export { MAX_ZOOM, MIN_ZOOM } from './EditorCanvas';
export { SAVE_PROMPT } from './EditorTopBar';

export function CanvasEditor() {
  const { id } = useParams();
  return (
    <EditorProvider key={id ?? 'new'}>
      <ReactFlowProvider>
        <div className="kz-editor">
          <FlowLoader id={id}>
            <EditorTopBar routeId={id} />
            <EditorCanvas />
          </FlowLoader>
        </div>
      </ReactFlowProvider>
    </EditorProvider>
  );
}
