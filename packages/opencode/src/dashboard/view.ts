/** Moved to the read model below the views: src/read/view.ts. */
export { RunView, renderStatus } from "../read/view"
