import type { KindDefinition } from '../../kinds';
import type { FormField } from '../../model/types';

export interface FormInputData {
  formFields?: FormField[];
  formTitle?: string;
}

/** The form trigger: a hosted form whose submissions start the flow. */
const formInput: KindDefinition<'form_input'> = {
  kind: 'formInput',
  providers: ['form_input'],
  nodeType: 'FormInput',
  label: { name: 'Form', description: 'Starts the flow when its form is submitted.' },
  fixedEvent: { id: 'form_submitted', name: 'Form Submitted' },
  triggerOnly: true,
  initialData: () => ({ formFields: [{ key: 'email', label: 'Email', type: 'email', required: true }], formTitle: '' }),
};

export default formInput;

declare module '../../model/types' {
  interface NodeKindMap {
    FormInput: true;
  }
  interface KindDataMap {
    form_input: FormInputData;
  }
}
