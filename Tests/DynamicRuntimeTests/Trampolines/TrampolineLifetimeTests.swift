// A trampoline slot's lifetime — immutable once handed out (retargeting publishes a
// new slot), and reused only after the RCU grace period of its retirement.
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

final class TrampolineLifetimeTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    func testRetiredSlotIsReusedOnlyAfterTheGracePeriod() throws {
        let target = unsafeBitCast(sf_tramp_entry as @convention(c) () -> Void, to: UnsafeRawPointer.self)
        let retired = try XCTUnwrap(sf_tramp_alloc(nil, target))
        var handedOut: [UnsafeMutableRawPointer] = []
        let reader = Thread.current.description
        // A reader that entered before the slot was retired may still be running its code.
        sf_rcu_enter()
        sf_tramp_free(retired)
        var free = 0
        sf_tramp_stats(nil, nil, &free)
        for _ in 0...(free + 1) {  // exhausts the free list, so the allocator must look at retired slots
            let s = try XCTUnwrap(sf_tramp_alloc(nil, target))
            XCTAssertNotEqual(s, retired, "a slot retired during a read section was handed out again (\(reader))")
            handedOut.append(s)
        }
        sf_rcu_exit()
        // After the grace period it comes back.
        handedOut.forEach { sf_tramp_free($0) }
        sf_tramp_stats(nil, nil, &free)
        var reused = false
        var again: [UnsafeMutableRawPointer] = []
        for _ in 0...(free + handedOut.count + 1) {
            let s = try XCTUnwrap(sf_tramp_alloc(nil, target))
            again.append(s)
            if s == retired { reused = true; break }
        }
        again.forEach { sf_tramp_free($0) }
        XCTAssertTrue(reused, "the retired slot is reused once no reader can be in it")
    }

    func testASlotIsImmutableOnceHandedOut() throws {
        let cls = try makeClass("TrampImmutable")
        try cls.addMethod("value") { (_: ObjectRef) -> Int in 1 }
        let first = cls.ownMethod(for: "value")!.implementation
        var before: UnsafeMutableRawPointer?
        sf_tramp_words(first.address, &before, nil)
        let words = { (p: UnsafeMutableRawPointer?) in p.map { [$0.load(as: UInt.self), $0.load(fromByteOffset: 8, as: UInt.self)] } }
        let pointee = words(before)
        // Replacing the method publishes a new slot; the old one keeps its words and still works.
        let previous = try cls.replaceMethod("value") { (_: ObjectRef) -> Int in 2 }
        XCTAssertEqual(previous, first)
        XCTAssertNotEqual(cls.ownMethod(for: "value")!.implementation, first)
        var after: UnsafeMutableRawPointer?
        sf_tramp_words(first.address, &after, nil)
        XCTAssertEqual(before, after)
        // What the context points at (a closure slot's own words: the closure) is unchanged too.
        XCTAssertEqual(pointee, words(after))
        let o = try cls.createInstance()
        let call = unsafeBitCast(previous!.pointer, to: (@convention(c) (sf_id?, sf_sel?) -> Int).self)
        XCTAssertEqual(call(o.raw, Selector("value").raw), 1)
        XCTAssertEqual(try o.send("value") as Int, 2)
    }

    /// The same through the runtime: a reader that looked up a hooked method's IMP (its hook
    /// slot) inside a read section can still call it after the hook is removed and more hooks
    /// of the same kind come and go than the allocator has slots to spare, with a collection
    /// after each. A slot (or its hook) freed early would send the stale call to another hook's
    /// context, whose method adds 1,000, or to freed memory. Two rules stand behind it: the
    /// hook is freed only after the method table's grace period, and only then retires its
    /// slot, which waits for a grace period of its own. This test breaks if the first fails;
    /// the test above is the one that catches a slot allocator ignoring the second.
    func testAStaleHookSlotCalledInsideItsSectionStillReachesItsOwnMethod() throws {
        // Seven integers: two on the stack, so the hooks take the spill entry (%r10 slots,
        // the kind sf_tramp_stats counts).
        let sel = Selector("a:b:c:d:e:f:g:")
        let types = "q@:qqqqqqq"
        typealias F = @convention(c) (sf_id?, sf_sel?, Int, Int, Int, Int, Int, Int, Int) -> Int
        let cls = try makeClass("TrampStale")
        try cls.addMethod(sel, types: types, rawBody: { ret, args in
            ret.storeBytes(of: args[8]!.load(as: Int.self) + 1, as: Int.self)
        })
        let other = try makeClass("TrampStaleOther")
        try other.addMethod(sel, types: types, rawBody: { ret, args in
            ret.storeBytes(of: args[8]!.load(as: Int.self) + 1_000, as: Int.self)
        })
        let o = try cls.createInstance(), p = try other.createInstance()
        let token = try cls.hook(sel, .instead) { try $0.proceed() }
        XCTAssertEqual(token.hook.entry, .spill)

        sf_rcu_enter()
        let stale = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(o.raw, sel.raw)), to: F.self)
        XCTAssertEqual(stale(o.raw, sel.raw, 0, 0, 0, 0, 0, 0, 1), 2)
        token.remove()
        var pending = 0, free = 0
        sf_tramp_stats(nil, &pending, &free)
        // Each cycle takes a slot and retires one: a free list of n (plus the n retired before
        // this section) is used up within 2n cycles, and an allocator that ignored the grace
        // period would then hand out what this section retired, the oldest last.
        var seen = Set<UnsafeRawPointer>()
        for i in 0..<(2 * (free + pending) + 16) {
            let t = try other.hook(sel, .instead) { try $0.proceed() }
            seen.insert(other.ownMethod(for: sel)!.implementation.address)
            let f = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(p.raw, sel.raw)), to: F.self)
            XCTAssertEqual(f(p.raw, sel.raw, 0, 0, 0, 0, 0, 0, i), i + 1_000)
            t.remove()
            Runtime.state.collectGarbage()
        }
        XCTAssertEqual(stale(o.raw, sel.raw, 0, 0, 0, 0, 0, 0, 41), 42, "the retired hook slot was handed to another hook")
        sf_rcu_exit()
        Runtime.state.collectGarbage()
        XCTAssertGreaterThan(seen.count, free, "the free list was used up")
        let now = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(o.raw, sel.raw)), to: F.self)
        XCTAssertEqual(now(o.raw, sel.raw, 0, 0, 0, 0, 0, 0, 1), 2, "unhooked")
    }
}
