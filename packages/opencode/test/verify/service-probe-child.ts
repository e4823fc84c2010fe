// A service probe in a process of its own, which prints each phase as it begins: the test SIGKILLs it
// mid-probe (no handler runs) and checks that nothing it started is left. Arg: JSON { spec, worktree, outDir, runId }.
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"

const { spec, worktree, outDir, runId } = JSON.parse(process.argv[2]!) as { spec: ServiceProbe.SpecInput; worktree: string; outDir: string; runId: string }
const result = await ServiceProbe.run(spec, { worktree, outDir, runId, onPhase: (phase) => process.stdout.write(`phase ${phase}\n`) })
process.stdout.write(`verdict ${JSON.stringify(result.verdict)}\n`)
