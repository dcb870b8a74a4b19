// expect: capture of 'tally' with non-Sendable type 'Tally' in a '@Sendable' closure
// A hook that writes a plain class instance: hooks run on the sender's thread.
import DynamicRuntime

final class Tally { var calls = 0 }

func observe(_ cls: RuntimeClass) throws {
    let tally = Tally()
    try cls.hook("work", .before) { _ in tally.calls += 1 }
}
