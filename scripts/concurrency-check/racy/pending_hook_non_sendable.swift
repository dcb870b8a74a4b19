// expect: capture of 'tally' with non-Sendable type 'Tally' in a '@Sendable' closure
// A hook that waits for its class and writes a plain class instance: it runs on the sender's
// thread once the class is registered.
import DynamicRuntime

final class Tally { var calls = 0 }

func observeLater() throws {
    let tally = Tally()
    try RuntimeClass.hook(whenRegistered: "Worker", "work", .before) { _ in tally.calls += 1 }
}
