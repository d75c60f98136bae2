import { createContext, useContext, useState, type ReactNode } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import { createEditorStore, type EditorState, type EditorStore } from './store';

const EditorStoreContext = createContext<EditorStore | null>(null);

export function EditorProvider({ children, store }: { children: ReactNode; store?: EditorStore }) {
  const [value] = useState<EditorStore>(() => store ?? createEditorStore());
  return <EditorStoreContext.Provider value={value}>{children}</EditorStoreContext.Provider>;
}

export function useEditorStoreApi(): EditorStore {
  const store = useContext(EditorStoreContext);
  if (!store) throw new Error('useEditor must be used inside <EditorProvider>');
  return store;
}

export function useEditor<T>(selector: (s: EditorState) => T): T {
  return useStore(useEditorStoreApi(), selector);
}

export function useEditorShallow<T>(selector: (s: EditorState) => T): T {
  return useStore(useEditorStoreApi(), useShallow(selector));
}
