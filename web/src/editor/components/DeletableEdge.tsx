import { CloseOutlined } from '@ant-design/icons';
import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps } from '@xyflow/react';
import { memo } from 'react';
import { useEditorStoreApi } from '../EditorContext';

function DeletableEdgeView({ id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, selected, animated, markerEnd }: EdgeProps) {
  const store = useEditorStoreApi();
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  const className = ['kz-edge', selected ? 'kz-edge-selected' : '', animated ? 'kz-edge-animated' : ''].filter(Boolean).join(' ');
  return (
    <>
      <BaseEdge id={id} path={path} className={className} markerEnd={markerEnd} />
      <EdgeLabelRenderer>
        <button
          type="button"
          className="kz-edge-delete nodrag nopan"
          style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          onClick={() => store.getState().dispatch({ type: 'removeLink', id })}
          aria-label="Delete link"
          data-testid={`edge-delete-${id}`}
        >
          <CloseOutlined />
        </button>
      </EdgeLabelRenderer>
    </>
  );
}

export const edgeTypes = { deletable: memo(DeletableEdgeView) };
