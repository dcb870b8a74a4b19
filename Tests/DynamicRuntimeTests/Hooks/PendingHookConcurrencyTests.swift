// Hooks asked for by class name while other threads register those classes, ask for and
// remove more hooks on them, and send to them as soon as they can find them. Run under
// ThreadSanitizer too:
//   swift test --sanitize=thread --filter PendingHookConcurrencyTests
import TestSupport
import CDynamicRuntime
import Glibc
import XCTest
@testable import DynamicRuntime

final class PendingHookConcurrencyTests: XCTestCase {
    static let rounds = 12
    static let namesPerRound = 4
    static let registrars = 2
    static let requesters = 4
    static let senders = 5
    static let hooksPerName = 4
    static let sendsPerName = 150

    /// One hook a requester thread asked for, and what became of it.
    private struct Asked: Sendable {
        let name: Int
        let index: Int
        let hook: PendingHook
        /// The requester took it back before it was installed: it must never run.
        let droppedWhileWaiting: Bool
    }

    func testEverySendAfterRegistrationSeesTheHookAndNothingInstallsTwice() throws {
        let baseline = HookRegistry.pendingHookCount
        for round in 0..<Self.rounds {
            try runRound(round)
        }
        XCTAssertEqual(HookRegistry.pendingHookCount, baseline, "no entry left in the pending table")
    }

    private func runRound(_ round: Int) throws {
        let names = (0..<Self.namesPerRound).map { uniqueName("PendingRace\(round)x\($0)") }
        // Asked for before any thread starts, so always waiting when its class registers: every
        // send to the class, from any thread that can find it, must see it (+1000).
        let anchors = try names.map {
            try RuntimeClass.hook(whenRegistered: $0, "value:", .after) { ctx in
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1000)
            }
        }
        let requestCount = Self.requesters * Self.namesPerRound * Self.hooksPerName
        let runs = Locked([Int](repeating: 0, count: requestCount))
        let asked = Locked<[Asked]>([])
        let originals = Locked<[Int: IMP]>([:])
        let bad = Locked<[String]>([])
        let errors = Locked<[String]>([])
        let sent = Locked(0)

        let threads = Self.registrars + Self.requesters + Self.senders
        runThreads(threads) { thread in
            do {
                if thread < Self.registrars {
                    for j in stride(from: thread, to: names.count, by: Self.registrars) {
                        let cls = try RuntimeClass.allocate(name: names[j])
                        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
                        originals.withLock { $0[j] = cls.ownMethod(for: "value:")!.implementation }
                        for _ in 0..<(j * 7 % 13) { sched_yield() }  // let requests and lookups interleave
                        cls.register()
                    }
                } else if thread < Self.registrars + Self.requesters {
                    let r = thread - Self.registrars
                    for k in 0..<Self.hooksPerName {
                        for j in 0..<names.count {
                            let index = (r * Self.namesPerRound + j) * Self.hooksPerName + k
                            let hook = try RuntimeClass.hook(whenRegistered: names[j], "value:", .before) { _ in
                                runs.withLock { $0[index] += 1 }
                            }
                            var dropped = false
                            if (index + round) % 2 == 0 {
                                // Taken back at once: it may still be waiting, or installed already.
                                let (removed, token) = hook.take()
                                dropped = removed && token == nil
                            }
                            asked.withLock { $0.append(Asked(name: j, index: index, hook: hook, droppedWhileWaiting: dropped)) }
                        }
                    }
                } else {
                    let s = thread - Self.registrars - Self.requesters
                    for step in 0..<names.count {
                        let j = (s + step) % names.count
                        var cls: RuntimeClass?
                        while cls == nil {
                            cls = RuntimeClass.named(names[j])
                            if cls == nil { sched_yield() }
                        }
                        let o = try cls!.createInstance()
                        for i in 0..<Self.sendsPerName {
                            let r: Int = try o.send("value:", i)
                            if r != i + 1 + 1000 {
                                bad.withLock { if $0.count < 10 { $0.append("\(names[j]) value:\(i) = \(r)") } }
                            }
                        }
                        sent.withLock { $0 += Self.sendsPerName }
                    }
                }
            } catch {
                errors.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        XCTAssertEqual(errors.current, [])
        XCTAssertEqual(bad.current, [], "a send after registration ran without the hook")
        XCTAssertEqual(sent.current, Self.senders * names.count * Self.sendsPerName)

        let all = asked.current
        XCTAssertEqual(all.count, requestCount)
        let counts = runs.current
        for j in 0..<names.count {
            let cls = try XCTUnwrap(RuntimeClass.named(names[j]))
            let listed = cls.hooks(for: "value:").map(\.identifier)
            XCTAssertEqual(Set(listed).count, listed.count, "no hook listed twice on \(names[j])")
            var expected: Set<HookIdentifier> = []
            if case let .installed(t) = anchors[j].state { expected.insert(t.identifier) } else {
                XCTFail("the anchor of \(names[j]) is \(anchors[j].state)")
            }
            for a in all where a.name == j {
                switch a.hook.state {
                case let .installed(t): expected.insert(t.identifier)
                case .removed: break
                case let other: XCTFail("a hook on \(names[j]) ended \(other)")
                }
                if a.droppedWhileWaiting { XCTAssertEqual(counts[a.index], 0, "a hook dropped while waiting ran") }
            }
            XCTAssertEqual(Set(listed), expected, "exactly the installed hooks, each once, on \(names[j])")
        }

        // Taking every hook off leaves each method exactly as it was built.
        for a in all { a.hook.remove() }
        for p in anchors { XCTAssertTrue(p.remove()) }
        for j in 0..<names.count {
            let cls = try XCTUnwrap(RuntimeClass.named(names[j]))
            XCTAssertEqual(cls.hooks(for: "value:"), [])
            XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, originals.current[j])
        }
        fwdCollect()
    }
}
