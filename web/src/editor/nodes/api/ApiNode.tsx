import { bodyNode } from '../card/bodyNode';
import { ApiBody } from './ApiBody';

/** The API call's card. */
export const ApiNode = bodyNode(ApiBody, 'ApiNode');
