// A hooked call over integer-register words (a typed send, or a C caller through the
// register entry) keeps its state and words in one stack block and builds an argument vector
// only when a hook asks for one; proceed() calls an original of whole words straight from the
// words: a plain function, or a non-throwing `Int` closure through its slot (one that captures
// nothing has a slot that jumps to the closure itself). A per-object hook reaches the
// receiver's own instead-only chain through its side table. Each path is checked against the
// same call made from C, and against the general path it replaces.
import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

/// What a closure that captures nothing calls: it counts and offsets through globals.
private let contextFreeRuns = Atomic<Int>(0)
private let contextFreeOffset = Atomic<Int>(0)

private func contextFreeMix(_ a: Int, _ b: Int) -> Int {
    contextFreeRuns.add(1, ordering: .relaxed)
    return a &* 3 &+ b &+ contextFreeOffset.load(ordering: .relaxed)
}

final class HookWordCallTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    private let sel: Selector = "mix:with:"
    private typealias F2 = @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int

    /// Originals that cannot throw, which proceed() calls through their slots as plain functions.
    private enum Original: CaseIterable { case capturing, contextFree }

    private func install(_ kind: Original, on cls: RuntimeClass, runs: Locked<Int>, offset: Int = 0,
                         replacing: Bool = false) throws {
        switch kind {
        case .capturing:
            let body: @Sendable (ObjectRef, Int, Int) -> Int = { _, a, b in
                runs.withLock { $0 += 1 }
                return a &* 3 &+ b &+ offset
            }
            if replacing { try cls.replaceMethod(sel) { (o: ObjectRef, a: Int, b: Int) in body(o, a, b) } } else {
                try cls.addMethod(sel) { (o: ObjectRef, a: Int, b: Int) in body(o, a, b) }
            }
        case .contextFree:
            contextFreeOffset.store(offset, ordering: .relaxed)
            if replacing { try cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) in contextFreeMix(a, b) } } else {
                try cls.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in contextFreeMix(a, b) }
            }
        }
        // Under a hook the entry's IMP is the hook's: the replaced original is checked by its calls.
        guard !replacing else { return }
        let imp = cls.ownMethod(for: sel)!.implementation
        XCTAssertEqual(imp.owner?.entersAsPlainFunction, true, "\(kind): a non-throwing Int body")
        var context: UnsafeMutableRawPointer?, target: UnsafeRawPointer?
        sf_tramp_words(unsafeBitCast(imp.pointer, to: UnsafeRawPointer.self), &context, &target)
        XCTAssertEqual(UnsafeRawPointer(context) == target, kind == .contextFree, "\(kind): a slot straight to the closure")
    }

    private func runs(_ kind: Original, _ counted: Locked<Int>) -> Int {
        kind == .capturing ? counted.current : contextFreeRuns.load(ordering: .relaxed)
    }

    /// The same message sent typed and from C through the method's IMP (the hook's register entry).
    private func sendBoth(_ o: Object, _ a: Int, _ b: Int, _ what: String,
                          file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let typed: Int = try o.send(sel, a, b)
        let imp = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F2.self)
        XCTAssertEqual(typed, imp(o.raw, sel.raw, a, b), "\(what): typed send and C call disagree", file: file, line: line)
        return typed
    }

    /// An instead hook over each original: proceeding once, twice with a changed argument, and
    /// not at all; the original runs as often as the hook proceeds, and is restored when unhooked.
    func testProceedReachesOriginalsThatCannotThrow() throws {
        for kind in Original.allCases {
            contextFreeRuns.store(0, ordering: .relaxed)
            let cls = try makeClass("HookWordCallOriginal")
            let counted = Locked(0)
            try install(kind, on: cls, runs: counted)
            let o = try cls.createInstance()
            let proceeds = Locked(1)
            let token = try cls.hook(sel, .instead) { ctx in
                var total = 0
                for i in 0..<proceeds.current {
                    if i > 0 { try ctx.setArgument(10, at: 0) }
                    try ctx.proceed()
                    total = total * 100 + (try ctx.returnValue(as: Int.self))
                }
                XCTAssertEqual(ctx.didProceed, proceeds.current > 0)
                try ctx.setReturnValue(proceeds.current == 0 ? -7 : total)
            }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind)"), 16, "\(kind): proceeding once")
            XCTAssertEqual(runs(kind, counted), 2, "\(kind)")
            proceeds.withLock { $0 = 2 }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) twice"), 16 * 100 + 31, "\(kind): the second sees the changed argument")
            XCTAssertEqual(runs(kind, counted), 6, "\(kind)")
            proceeds.withLock { $0 = 0 }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) none"), -7, "\(kind): not proceeding")
            XCTAssertEqual(runs(kind, counted), 6, "\(kind): the original did not run")
            // Replaced under the hook (by the other kind, then back): the hook wraps the new one.
            proceeds.withLock { $0 = 1 }
            for new in Original.allCases {
                try install(new, on: cls, runs: counted, offset: 50, replacing: true)
                XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) -> \(new)"), 66, "\(kind) -> \(new)")
            }
            token.remove()
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) unhooked"), 66, "\(kind)")
        }
    }

    /// A word call builds its argument vector only when asked: a hook that reads the arguments
    /// and the receiver, keeps the call and replays it after the send returned gets the words
    /// as they were, including one it changed before proceeding.
    func testArgumentsAndRecordsOfAWordCall() throws {
        let cls = try makeClass("HookWordCallArguments")
        let counted = Locked(0)
        try install(.capturing, on: cls, runs: counted)
        let o = try cls.createInstance()
        let seen = Locked<[String]>([])
        let kept = Locked<Invocation?>(nil)
        let target = o.ref, sent = sel
        let token = try cls.hook(sel, .instead) { ctx in
            XCTAssertEqual(ctx.target, target)
            XCTAssertEqual(ctx.selector, sent)
            seen.withLock { $0.append("\(try! ctx.argument(at: 0, as: Int.self)),\(try! ctx.argument(at: 1, as: Int.self))") }
            try ctx.setArgument(try ctx.argument(at: 1, as: Int.self) + 1, at: 1)
            kept.withLock { $0 = ctx.makeInvocation() }
            try ctx.proceed()
        }
        XCTAssertTrue(token.hook.takesWords, "the typed send takes the word call")
        XCTAssertEqual(try sendBoth(o, 4, 2, "arguments"), 15)
        XCTAssertEqual(seen.current, ["4,2", "4,2"], "typed and C calls see the same words")
        let replay = try XCTUnwrap(kept.current)
        try replay.invoke()
        XCTAssertEqual(try replay.returnValue(as: Int.self), 15, "the record kept the changed argument")
        XCTAssertEqual(counted.current, 3)
        token.remove()
    }

    /// Per-object hooks: each object of the shared hidden class runs its own chain (reached
    /// through its side table while it heads the object's list), on every selector it hooked,
    /// merged under a class hook when there is one, and the plain call again once unhooked.
    func testOwnChainsOfObjectsSharingAHiddenClass() throws {
        let other: Selector = "other:with:"
        let cls = try makeClass("HookWordCallObjects")
        let counted = Locked(0)
        try install(.capturing, on: cls, runs: counted)
        try cls.addMethod(other) { (_: ObjectRef, a: Int, b: Int) -> Int in a &- b }
        let a = try cls.createInstance(), b = try cls.createInstance(), plain = try cls.createInstance()
        func times(_ k: Int) -> @Sendable (HookContext) throws -> Void {
            { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * k)
            }
        }
        let aMix = try a.hook(sel, .instead, times(2))
        let bMix = try b.hook(sel, .instead, times(3))
        // b's list now heads with `other:with:`; its `mix:with:` chain is found the general way.
        let bOther = try b.hook(other, .instead, times(10))
        XCTAssertEqual(try sendBoth(a, 5, 1, "a"), 32)
        XCTAssertEqual(try sendBoth(b, 5, 1, "b, not the head"), 48)
        XCTAssertEqual(try sendBoth(plain, 5, 1, "plain"), 16)
        let otherB: Int = try b.send(other, 9, 4)
        XCTAssertEqual(otherB, 50, "b's head chain")
        let otherA: Int = try a.send(other, 9, 4)
        XCTAssertEqual(otherA, 5, "a has no hook on other:with:")
        // A class hook: the objects' own hooks run inside it.
        let classHook = try cls.hook(sel, .instead, times(7))
        XCTAssertEqual(try sendBoth(a, 5, 1, "a under a class hook"), 16 * 2 * 7)
        XCTAssertEqual(try sendBoth(plain, 5, 1, "plain under a class hook"), 16 * 7)
        classHook.remove()
        XCTAssertEqual(try sendBoth(a, 5, 1, "a again"), 32)
        for token in [aMix, bMix, bOther] { token.remove() }
        for o in [a, b, plain] { XCTAssertEqual(try sendBoth(o, 5, 1, "unhooked"), 16) }
    }
}
