import DynamicRuntime
import MessageThrottle

/// The throttling part of the demo: one burst of messages against each mode, on a timeline,
/// run in virtual time so the picture is exact and instant.
enum ThrottleDemo {
    /// When each message is sent (ms) — its argument is its position, 1-based.
    static let sends = [0, 20, 40, 60, 150, 170, 190, 210, 400, 430]
    static let window = 100
    static let width = 70  // columns; 10 ms each

    /// One timeline: the name `--mode` selects it by, its label, and the mode.
    struct Mode {
        let name: String
        let label: String
        let mode: ThrottleMode
    }

    static let modes: [Mode] = [
        Mode(name: "firstly", label: "firstly", mode: .firstly),
        Mode(name: "last", label: "last", mode: .last),
        Mode(name: "debounce", label: "debounce", mode: .debounce),
        Mode(name: "maxwait", label: "debounce maxWait 150", mode: .debounceMaxWait(.milliseconds(150))),
        Mode(name: "throttle", label: "throttle lead+trail", mode: .throttle(leading: true, trailing: true)),
        Mode(name: "cooldown", label: "cooldown", mode: .cooldown),
        Mode(name: "leading", label: "debounce leading", mode: .leadingDebounce()),
        Mode(name: "immediate", label: "debounce immediate", mode: .leadingDebounce(trailing: false)),
        Mode(name: "since", label: "throttle since run", mode: .throttleSincePerformed(latest: true)),
        Mode(name: "delayed", label: "cooldown delay 50", mode: .delayedCooldown(delay: .milliseconds(50))),
    ]

    /// Draws the timelines of `selected` and returns the summary: how many messages each ran.
    static func run(_ selected: [Mode]) throws -> String {
        print("\n== throttling: \(sends.count) messages, window \(window) ms " + String(repeating: "=", count: 22))
        print("   each column is 10 ms; digits are the message's argument (1-9, then 0 for 10)\n")
        let cls = try RuntimeClass(name: "Ticker")
        let log = Log()
        try cls.addMethod("tick:") { (_: ObjectRef, n: Int) in log.record(n) }
        print("   " + pad("sent", 20) + "|" + row(sends.enumerated().map { ($1, $0 + 1) }) + "|")
        var counts: [String] = []
        for m in selected {
            let (name, mode) = (m.label, m.mode)
            let clock = ManualClock()
            let engine = Engine(executor: ManualExecutor(clock: clock))
            log.reset(clock)
            let obj = try cls.createInstance()
            let rule = try obj.limit("tick:", oncePer: .milliseconds(window), mode: mode, in: engine)
            let rejectLog = Log()
            rejectLog.reset(clock)
            rule.onReject = { inv in rejectLog.record((try? inv.argument(at: 0, as: Int.self)) ?? 0) }
            for (i, t) in sends.enumerated() {
                clock.advance(to: ThrottleInstant(nanoseconds: Int64(t) * 1_000_000))
                try obj.send("tick:", i + 1, as: Void.self)
            }
            clock.advance(by: .milliseconds(window * 3))
            rule.discard()
            let ran = log.entries
            let rejected = rejectLog.entries.map(\.1)
            counts.append("\(m.name) \(ran.count)" + (rejected.isEmpty ? "" : " (\(rejected.count) rejected)"))
            print("   " + pad(name, 20) + "|" + row(ran) + "|  ran " + ran.map { "\($0.1)@\($0.0)" }.joined(separator: " ")
                  + (rejected.isEmpty ? "" : "; rejected \(rejected.map(String.init).joined(separator: ","))"))
        }
        print("\n   firstly: first at once, the rest ignored for the window.  last: each window's last")
        print("   message at its end.  debounce: after a quiet window.  maxWait: at least every 150 ms.")
        print("   throttle: leading and trailing edges (a lone call fires once).  cooldown: rejected calls reported.")
        print("   leading: at once, then after quiet.  immediate: at once, silent until quiet.  since: the window")
        print("   runs from the last run.  delayed: 50 ms after the call, cooling 100 ms from the call.")
        return "of \(sends.count) messages in bursts, each mode ran: " + counts.joined(separator: ", ")
            + "; every timeline ran in virtual time, so it is exact and instant."
    }

    private static func row(_ events: [(Int, Int)]) -> String {
        var cells = Array(repeating: Character("."), count: width)
        for (t, n) in events where t / 10 < width {
            cells[t / 10] = Character(String(n % 10))
        }
        return String(cells)
    }

    private static func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.count)) }

    /// Records (time in ms, argument) for each performed tick.
    final class Log: @unchecked Sendable {
        private(set) var entries: [(Int, Int)] = []
        private var clock: ManualClock?
        func reset(_ c: ManualClock) { entries = []; clock = c }
        func record(_ n: Int) { entries.append((Int((clock?.now.nanoseconds ?? 0) / 1_000_000), n)) }
    }
}
