/** Moved to the read model below the views: src/read/status-read.ts. */
export { readStatus } from "../read/status-read"
