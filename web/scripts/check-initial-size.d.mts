export declare const BUDGET_KB: number;
/** The script URLs index.html loads up front: module entries and modulepreloads, in order. */
export declare function initialScripts(html: string): string[];
