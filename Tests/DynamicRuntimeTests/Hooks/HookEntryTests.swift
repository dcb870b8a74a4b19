// A hook's entry is chosen from the signature when it is installed — a register
// entry for register-only signatures, the spill entry for the rest — and the call path under
// it takes no lock and allocates nothing. Each signature class is called through both entries
// (the register one forced off for the comparison) by two different callers.
import TestSupport
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

final class HookEntryTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
        HookEntryKind.registerEntriesEnabled.store(true, ordering: .relaxed)
    }

    override func tearDown() {
        HookEntryKind.registerEntriesEnabled.store(true, ordering: .relaxed)
        super.tearDown()
    }

    /// Which entry each listed signature gets: what the classification promises.
    func testTheEntryIsChosenFromTheSignature() throws {
        let expected: [String: HookEntryKind] = [
            "v@:": .integerRegisters(2), "q@:q": .integerRegisters(3), "q@:qqq": .integerRegisters(5),
            "c@:cCsSiI": .spill,                      // 8 integer registers: no free one for the hook
            "q@:qqqqqq": .spill, "d@:dddddddd": .registers(2), "d@:dddddddddd": .spill,
            "f@:ffff": .registers(2), "{F=ff}@:{F=ff}": .registers(2), "d@:qdqfqdiq": .spill,
            "{P=dd}@:{P=dd}d": .spill,                // returned in two registers
            "{Q=qq}@:{Q=qq}": .spill, "{M=qd}@:{M=qd}{N=dq}": .spill, "{L=qqqq}@:{L=qqqq}q": .spill,
            "d@:q{P=dd}": .registers(3), "q@:d{Q=qq}": .registers(4), "^v@:^v:*": .integerRegisters(5),
        ]
        for (n, (types, kind)) in expected.sorted(by: { $0.key < $1.key }).enumerated() {
            let cls = try makeClass("HookEntryKind\(n)")
            let sel = Selector("m\(n)")
            try cls.addMethod(sel, types: types, rawBody: { _, _ in })
            let token = try cls.hook(sel, .instead) { try $0.proceed() }
            XCTAssertEqual(token.hook.entry, kind, types)
            token.remove()
        }
    }

    /// Every signature class, hooked once with the entry the signature gets and once with the
    /// spill entry forced, called by libffi and by the direct call: same arguments seen, same
    /// bytes returned, and an instead-hook that changes the return value is honoured.
    func testRegisterEntriesAgreeWithTheSpillEntry() throws {
        var registerEntries = 0
        for (n, types) in (trampolineSignatures + ["d@:q{P=dd}", "q@:d{Q=qq}", "f@:if", "v@:d"]).enumerated() {
            let sig = try Signature(types)
            let args = (2..<sig.argumentTypes.count).map { trampolineBytes(sig.storage.argumentSizes[$0], seed: $0 &* 7 &+ n) }
            var results: [[[UInt8]]] = []
            for forceSpill in [false, true] {
                HookEntryKind.registerEntriesEnabled.store(!forceSpill, ordering: .relaxed)
                let probe = TrampolineProbe(sig)
                let owner = try makeClass("HookEntryOwner\(n)")
                let sel = Selector("entry\(n)")
                let method = try owner.addMethod(sel, types: types, rawBody: { ret, args in probe.body(ret, args) })
                let cls = try makeClass("HookEntryHooked\(n)")
                // Without its owner, so the hook reaches the original with the direct call.
                try cls.addMethod(sel, implementation: IMP(method.implementation.pointer), types: types)
                let calls = Locked(0)
                let token = try cls.hook(sel, .instead) { ctx in
                    calls.withLock { $0 += 1 }
                    try ctx.proceed()
                }
                if token.hook.entry != .spill, token.hook.entry != .libffi { registerEntries += forceSpill ? 0 : 1 }
                if forceSpill { XCTAssertEqual(token.hook.entry, .spill, types) }
                let imp = cls.ownMethod(for: sel)!.implementation
                let obj = try cls.createInstance()
                var seen: [[UInt8]] = []
                for direct in [false, true] {
                    probe.received = []
                    let got = trampolineCall(sig, imp.pointer, receiver: obj.raw, selector: sel, arguments: args, direct: direct)
                    XCTAssertEqual(probe.received, args, "\(types) (spill: \(forceSpill), direct: \(direct)): arguments")
                    XCTAssertEqual(got, probe.returnBytes, "\(types) (spill: \(forceSpill), direct: \(direct)): return value")
                    seen.append(got)
                }
                XCTAssertEqual(calls.current, 2, types)
                results.append(seen)
                token.remove()
                withExtendedLifetime(method) {}
            }
            XCTAssertEqual(results[0], results[1], "\(types): the two entries disagree")
        }
        XCTAssertGreaterThanOrEqual(registerEntries, 12, "most listed signatures take a register entry")
    }

    /// The common chain, a single instead-hook: proceeding runs the original once with the
    /// arguments as the hook left them; not proceeding never runs it and returns what the hook set.
    func testASingleInsteadHookThatDoesAndDoesNotProceed() throws {
        for types in ["q@:qq", "d@:dd", "q@:qqqqqqq"] {
            let cls = try makeClass("SingleInstead")
            let sel = Selector("f:g:")
            let originals = Locked(0)
            try cls.addMethod(sel, types: types, rawBody: { ret, args in
                originals.withLock { $0 += 1 }
                if types.hasPrefix("d") {
                    ret.storeBytes(of: args[2]!.load(as: Double.self) - args[3]!.load(as: Double.self), as: Double.self)
                } else {
                    ret.storeBytes(of: args[2]!.load(as: Int.self) - args[3]!.load(as: Int.self), as: Int.self)
                }
            })
            let o = try cls.createInstance()
            let isDouble = types.hasPrefix("d")
            func send(_ a: Int, _ b: Int) throws -> Double {
                switch types {
                case "d@:dd": return try o.send(sel, Double(a), Double(b))
                case "q@:qq": return Double(try o.send(sel, a, b) as Int)
                default:
                    // Seven integers: two on the stack, the spill entry; sent from C.
                    typealias F7 = @convention(c) (sf_id?, sf_sel?, Int, Int, Int, Int, Int, Int, Int) -> Int
                    let imp = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F7.self)
                    return Double(imp(o.raw, sel.raw, a, b, 0, 0, 0, 0, 0))
                }
            }
            let proceed = Locked(true)
            let token = try cls.hook(sel, .instead) { ctx in
                if proceed.current {
                    if isDouble { try ctx.setArgument(100.0, at: 1) } else { try ctx.setArgument(100, at: 1) }
                    try ctx.proceed()
                    XCTAssertTrue(ctx.didProceed)
                } else {
                    XCTAssertFalse(ctx.didProceed)
                    if isDouble { try ctx.setReturnValue(-7.0) } else { try ctx.setReturnValue(-7) }
                }
            }
            XCTAssertEqual(try send(5, 3), 5 - 100, types)
            XCTAssertEqual(originals.current, 1, types)
            proceed.withLock { $0 = false }
            XCTAssertEqual(try send(5, 3), -7, types)
            XCTAssertEqual(originals.current, 1, "\(types): the original must not run")
            token.remove()
            XCTAssertEqual(try send(5, 3), 2, types)
        }
    }

    /// An error thrown by a hook behind a register entry reaches the sender; the caller from C
    /// gets zero.
    func testAHookErrorThroughARegisterEntry() throws {
        let cls = try makeClass("RegisterEntryError")
        let sel: Selector = "f:g:"
        try cls.addMethod(sel, types: "d@:dd", rawBody: { ret, _ in ret.storeBytes(of: 1.5, as: Double.self) })
        let token = try cls.hook(sel, .instead) { _ in throw TestError.boom }
        XCTAssertEqual(token.hook.entry, .registers(2))
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send(sel, 1.0, 2.0) as Double)
        let imp = cls.ownMethod(for: sel)!.implementation
        typealias F = @convention(c) (sf_id?, sf_sel?, Double, Double) -> Double
        XCTAssertEqual(unsafeBitCast(imp.pointer, to: F.self)(o.raw, sel.raw, 1, 2), 0)
        Runtime.dropPending()
        token.remove()
    }
}

private enum TestError: Error { case boom }
