// The trampoline slots that replace libffi closures — every signature class through
// closures and hooks, exactly which signatures keep libffi's closure, W^X at all times (the
// fallback included, forced here by the test hook sf_tramp_set_enabled), and slots near their
// targets. Lifetime: TrampolineLifetimeTests; SF_TRAMPOLINES=0: TrampolineFallbackTests.
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

final class TrampolineTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    func testEverySignatureClassThroughTrampolines() throws {
        let count = try checkTrampolineSignatures("trampoline")
        XCTAssertEqual(count, trampolineSignatures.count, "every listed signature is carried by a trampoline")
    }

    /// Exactly which signatures fall back to libffi's closure: of everything the parser accepts
    /// (the scalar codes, pointers, structs of them), those with a long double by value — as an
    /// argument, a return or a struct field. The entries carry no x87 values.
    func testOnlyStructsHoldingALongDoubleKeepTheLibffiClosure() throws {
        var codes: [Character] = []
        for i in 0..<sf_type_code_count() { codes.append(Character(UnicodeScalar(UInt8(bitPattern: sf_type_code_character(i))))) }
        XCTAssertTrue(codes.contains("D") && codes.contains("q") && codes.count >= 20, "the type-code table")
        for code in codes where code != "v" {
            let x87 = code == "D"
            let c = code == "^" ? "^v" : String(code)
            // A long double by itself: on the stack and in %st(0), through the spill entry.
            for types in ["\(c)@:\(c)", "v@:\(c)", "\(c)@:", "v@:qqqqqq\(c)", "\(c)@:q\(c)q\(c)"] {
                XCTAssertNotNil(try Signature(types).storage.layout, "\(types): carried by the entries")
            }
            for types in ["{S=\(c)q}@:{S=\(c)q}", "v@:{S=q{T=\(c)}}", "{L=qqq\(c)}@:"] {
                let sig = try Signature(types)
                XCTAssertEqual(sig.storage.layout == nil, x87, "\(types): \(x87 ? "falls back" : "carried by the entries")")
            }
        }
        for types in ["^D@:^D", "v@:^{S=Dq}"] {  // behind a pointer it is a pointer
            XCTAssertNotNil(try Signature(types).storage.layout, types)
        }
    }

    func testNoMappingIsWritableAndExecutable() throws {
        XCTAssertEqual(writableExecutableMappings(), [], "before")
        let watcher = MappingWatcher()
        let cls = try makeClass("TrampWX")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) -> Double in x * 2 }
        let token = try cls.hook("add:to:", .instead) { try $0.proceed() }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 2, 3) as Int, 5)
        XCTAssertEqual(try o.send("scale:", 1.5) as Double, 3)
        XCTAssertEqual(writableExecutableMappings(), [], "after closures and a hook")

        // The slot's code is read+execute, its words read+write, and they point where they should.
        let imp = cls.ownMethod(for: "scale:")!.implementation
        XCTAssertEqual(imp.owner?.isTrampoline, true)
        XCTAssertEqual(mappingPermissions(of: imp.address)?.prefix(3), "r-x")
        XCTAssertEqual(mappingPermissions(of: imp.address + 4096)?.prefix(3), "rw-")
        var context: UnsafeMutableRawPointer?
        var target: UnsafeRawPointer?
        sf_tramp_words(imp.address, &context, &target)
        XCTAssertEqual(context, UnsafeMutableRawPointer(imp.owner!.context!))
        XCTAssertEqual(target, unsafeBitCast(sf_tramp_entry as @convention(c) () -> Void, to: UnsafeRawPointer.self))
        token.remove()
        XCTAssertEqual(writableExecutableMappings(), [], "after unhooking")

        // Long double closures, hooks and forwarding go through the spill entry; what the entries
        // do not carry (a struct holding a long double) keeps libffi's closure, in a page of its
        // own made read+execute once written, as does every closure and hook while the fallback
        // is forced (below).
        let ld = try makeClass("TrampWXLongDouble")
        try ld.addMethod("twice:") { (_: ObjectRef, x: Float80) -> Float80 in x * 2 }
        let ldIMP = ld.ownMethod(for: "twice:")!.implementation
        XCTAssertEqual(ldIMP.owner?.isTrampoline, true, "long double: the spill entry")
        XCTAssertEqual(mappingPermissions(of: ldIMP.address)?.prefix(3), "r-x")
        let ldHook = try ld.hook("twice:", .after) { ctx in
            guard case let .longDouble(r) = ctx.returnValue else { return }
            try ctx.setReturnValue(r + 1)
        }
        XCTAssertEqual(ldHook.hook.entry, .spill)
        let ldObject = try ld.createInstance()
        XCTAssertEqual(try ldObject.send("twice:", Float80(1.5)) as Float80, 4)
        typealias LD = @convention(c) (sf_id?, sf_sel?, Float80) -> Float80
        let ldHooked = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(ldObject.raw, Selector("twice:").raw)), to: LD.self)
        XCTAssertEqual(ldHooked(ldObject.raw, Selector("twice:").raw, 2), 5, "the hooked long double method from C")
        try ld.addMethod("half:", implementation: .forwarding, types: "D@:D")
        try ld.setForwardingTarget { _, _ in o.ref }
        try cls.addMethod("half:") { (_: ObjectRef, x: Float80) -> Float80 in x / 2 }
        let half = unsafeBitCast(IMP.forwarding.pointer, to: LD.self)
        XCTAssertEqual(half(ldObject.raw, Selector("half:").raw, 3), 1.5, "a forwarded long double call from C")
        ldHook.remove()

        sf_tramp_set_enabled(0)
        defer { sf_tramp_set_enabled(1) }
        let fallback = try makeClass("TrampWXFallback")
        try fallback.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        try fallback.addMethod("mix:with:") { (_: ObjectRef, a: Int, x: Double) -> Double in Double(a) + x }
        let fallbackIMP = fallback.ownMethod(for: "add:to:")!.implementation
        XCTAssertEqual(fallbackIMP.owner?.isTrampoline, false)
        XCTAssertEqual(mappingPermissions(of: fallbackIMP.address)?.prefix(3), "r-x")
        let fallbackHook = try fallback.hook("mix:with:", .instead) { try $0.proceed() }
        XCTAssertEqual(fallbackHook.hook.entry, .libffi)
        let f = try fallback.createInstance()
        XCTAssertEqual(try f.send("add:to:", 4, 5) as Int, 9)
        XCTAssertEqual(try f.send("mix:with:", 4, 0.5) as Double, 4.5)
        fallbackHook.remove()
        sf_tramp_set_enabled(1)

        let seen = watcher.stop()
        XCTAssertEqual(seen.found, [], "a mapping was writable and executable while closures and hooks were made")
        XCTAssertGreaterThan(seen.reads, 1)
        XCTAssertEqual(writableExecutableMappings(), [], "after")
    }

    /// Every slot jumps to code within a rel32 of itself (the chunks are placed below the
    /// library's text): closure slots of each kind, hook slots of each entry.
    func testSlotsLieNearTheCodeTheyJumpTo() throws {
        let cls = try makeClass("TrampNear")
        // Closures that capture nothing: slots that drop the selector and jump to the closure.
        try cls.addMethod("one") { (_: ObjectRef) in 1 }
        try cls.addMethod("two:") { (_: ObjectRef, a: Int) in a }
        try cls.addMethod("three:b:") { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        try cls.addMethod("four:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) in a &+ b &+ c }
        // Capturing: the context in %r8, then the non-throwing thunk.
        let k = Int.random(in: 1...9)
        try cls.addMethod("kept:b:") { (_: ObjectRef, a: Int, b: Int) in a &+ b &+ k }
        try cls.addMethod("five:") { (_: ObjectRef, x: Double) -> Double in x }                // spill entry
        try cls.addMethod("six:", types: "q@:qqqqqqq", rawBody: { _, _ in })                   // stack arguments
        let names = ["one", "two:", "three:b:", "four:b:c:", "kept:b:", "five:", "six:"]
        for name in names.prefix(4) {
            var context: UnsafeMutableRawPointer?, target: UnsafeRawPointer?
            sf_tramp_words(cls.ownMethod(for: Selector(name))!.implementation.address, &context, &target)
            XCTAssertEqual(UnsafeRawPointer(context), target, "\(name): a selector-dropping slot")
        }
        var slots = names.map { ($0, cls.ownMethod(for: Selector($0))!.implementation) }
        let hooked = ["one", "five:", "six:"]
        let hooks = try hooked.map { name in try cls.hook(Selector(name), .instead) { try $0.proceed() } }
        XCTAssertEqual(Set(hooks.map { "\($0.hook.entry)" }).count, 3, "one hook of each entry")
        slots += hooked.map { ("hook of \($0)", cls.ownMethod(for: Selector($0))!.implementation) }
        for (name, imp) in slots {
            XCTAssertEqual(mappingPermissions(of: imp.address)?.prefix(3), "r-x", name)
            var target: UnsafeRawPointer?
            sf_tramp_words(imp.address, nil, &target)
            let t = UInt(bitPattern: try XCTUnwrap(target, name)), slot = UInt(bitPattern: imp.address)
            XCTAssertLessThan(slot > t ? slot - t : t - slot, 1 << 31, "\(name): within a rel32 of its target")
        }
        hooks.forEach { $0.remove() }
    }

    func testAThrowingClosureThroughATrampolineReturnsZeroAndReportsTheError() throws {
        struct Boom: Error {}
        let cls = try makeClass("TrampThrow")
        try cls.addMethod("fail:") { (_: ObjectRef, x: Double) throws -> Double in
            if x < 0 { throw Boom() }
            return x
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("fail:", 2.0) as Double, 2)
        XCTAssertThrowsError(try o.send("fail:", -1.0) as Double)
        let imp = cls.ownMethod(for: "fail:")!.implementation
        let call = unsafeBitCast(imp.pointer, to: (@convention(c) (sf_id?, sf_sel?, Double) -> Double).self)
        XCTAssertEqual(call(o.raw, Selector("fail:").raw, -1), 0)
        XCTAssertNotEqual(sf_last_error(), SF_OK)
        _ = try? Runtime.rethrowPending()
    }
}
