/** Moved to the read model below the views: src/read/run-data.ts. */
export { RunData } from "../read/run-data"
