import CDynamicRuntime
import Glibc
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Swift `String` arguments and returns: round trips through every path (typed and dynamic
/// sends, closure methods, hooks, forwarding, invocations, streams), refused NULs and NULLs,
/// and the ownership model: nothing stays lent after a Swift send, a C caller's pool frees
/// what it was lent, records own their copies.
final class StringValueTests: XCTestCase {
    private var cls: RuntimeClass!
    private var obj: Object!

    override func setUpWithError() throws {
        cls = try makeClass("Strings")
        try cls.addMethod("echo:") { (_: ObjectRef, s: String) -> String in s + "!" }
        try cls.addMethod("utf8Count:") { (_: ObjectRef, s: String) -> Int in s.utf8.count }
        try cls.addMethod("join:with:") { (_: ObjectRef, a: String, b: String) -> String in a + "+" + b }
        obj = try cls.createInstance()
    }

    /// Samples: empty, ASCII, non-ASCII (2-, 3- and 4-byte UTF-8), long.
    private let samples = ["", "abc", "héllo wörld", "日本語", "🌍 emoji 👩‍👩‍👧", String(repeating: "xyzé", count: 5_000)]

    func testStringsRoundTripThroughTypedAndDynamicSends() throws {
        let before = sf_lent_mark()
        for s in samples {
            XCTAssertEqual(try obj.send("echo:", s) as String, s + "!")
            XCTAssertEqual(try obj.send("utf8Count:", s) as Int, s.utf8.count)
            XCTAssertEqual(try obj.send("join:with:", s, "é") as String, s + "+é")
            XCTAssertEqual(try obj.send("echo:", s).stringValue, s + "!", "dynamic send")
            XCTAssertEqual(try obj.send("echo:", s, as: CString.self).string, s + "!", "read as an owned CString")
        }
        XCTAssertEqual(cls.method(for: "echo:")?.signature.encoding, "*@:*")
        XCTAssertEqual(sf_lent_mark(), before, "a Swift send frees what it lent")
    }

    func testAStringWithANULIsRefusedWithATypedError() throws {
        let e = thrownError { try obj.send("echo:", "a\0b") as String }
        guard case .invalidArgument(let c)? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(c.className, cls.name)
        XCTAssertEqual(c.selector, "echo:")
        XCTAssertEqual(c.argument, 1)
        XCTAssertEqual(c.actual, "a NUL at UTF-8 offset 1")
        XCTAssertEqual(thrownError { try obj.send("join:with:", "ok", "\0") }?.context.argument, 2, "dynamic send, argument 2")

        // A body returning one: the sender gets the error, the C caller NULL and the status.
        try cls.addMethod("broken") { (_: ObjectRef) -> String in "x\0y" }
        let r = thrownError { try obj.send("broken") as String }
        guard case .invalidArgument(let rc)? = r else { return XCTFail("\(String(describing: r))") }
        XCTAssertEqual(rc.className, cls.name)
        XCTAssertEqual(rc.selector, "broken")
        XCTAssertTrue(rc.isReturnValue)
        var out: UnsafePointer<CChar>? = UnsafePointer(bitPattern: 1)
        XCTAssertEqual(sf_msg_send(obj.raw, sf_sel_registerName("broken"), &out, nil), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(out)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("NUL at UTF-8 offset 1"))
        XCTAssertThrowsError(try CString(copying: "a\0"))
    }

    func testANULLArgumentIsAnErrorAndANULLReturnReadsAsEmpty() throws {
        let nullReturn: @convention(c) (sf_id?, sf_sel?) -> UnsafePointer<CChar>? = { _, _ in nil }
        try cls.addMethod("nothing", implementation: IMP(unsafeBitCast(nullReturn, to: sf_imp.self)), types: "*@:")
        XCTAssertEqual(try obj.send("nothing") as String, "", "like a throttled call's zeroed return")
        XCTAssertNil(try obj.send("nothing", as: CString.self).pointer, "CString tells NULL apart")
        let n = thrownError { try obj.send("echo:", CString(nil)) as String }
        XCTAssertEqual(n?.context.argument, 1, "a NULL reaching a String parameter names the argument")
    }

    /// Sends `echo:` as a C caller does; the result is lent to this thread.
    private func cEcho(_ word: String) -> (sf_status, UnsafePointer<CChar>?) {
        var out: UnsafePointer<CChar>? = nil
        let status = word.withCString { arg -> sf_status in
            var a: UnsafePointer<CChar>? = arg
            return withUnsafeMutablePointer(to: &a) { p in
                var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(p)]
                return sf_msg_send(obj.raw, sf_sel_registerName("echo:"), &out, &args)
            }
        }
        return (status, out)
    }

    func testACCallerKeepsAReturnedStringUntilItPopsItsPool() throws {
        let before = sf_lent_mark()
        let pool = sf_autoreleasePoolPush()
        let results = ["one", "twö"].map(cEcho)
        XCTAssertEqual(results.map(\.0), [SF_OK, SF_OK])
        // Both are still valid: the second call did not reuse the first one's buffer.
        XCTAssertEqual(results.map { $0.1.map { String(cString: $0) } }, ["one!", "twö!"])
        XCTAssertEqual(sf_lent_mark(), before + 2)
        XCTAssertEqual(sf_autoreleasePoolPop(pool), SF_OK)
        XCTAssertEqual(sf_lent_mark(), before, "popping freed them")
        XCTAssertEqual(sf_autoreleasePoolPop(nil), SF_ERR_INVALID_ARGUMENT)

        let outer = sf_autoreleasePoolPush()
        _ = cEcho("a")
        let inner = sf_autoreleasePoolPush()
        _ = cEcho("b")
        XCTAssertEqual(sf_autoreleasePoolPop(outer), SF_OK)
        XCTAssertEqual(sf_autoreleasePoolPop(inner), SF_ERR_INVALID_ARGUMENT, "an outer pop freed it already")
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("popped already"))
        XCTAssertEqual(sf_lent_mark(), before)
    }

    func testHooksReadAndRewriteStringArgumentsAndReturns() throws {
        let seen = Locked<[String]>([])
        let before = try cls.hook("echo:", .before) { ctx in
            let s: String = try ctx.argument(at: 0)
            seen.append(s)
            if s == "swap" { try ctx.setArgument("swapped ünïcode", at: 0) }
        }
        let after = try cls.hook("echo:", .after) { ctx in
            let r: String = try ctx.returnValue()
            seen.append(r)
            if r.hasPrefix("swapped") { try ctx.setReturnValue(r.uppercased()) }
        }
        defer { before.remove(); after.remove() }
        XCTAssertEqual(try obj.send("echo:", "plain") as String, "plain!")
        XCTAssertEqual(try obj.send("echo:", "swap") as String, "SWAPPED ÜNÏCODE!")
        XCTAssertEqual(seen.current, ["plain", "plain!", "swap", "swapped ünïcode!"])

        let refusing = try cls.hook("utf8Count:", .before) { ctx in try ctx.setArgument("a\0", at: 0) }
        defer { refusing.remove() }
        let e = try XCTUnwrap(thrownError { try obj.send("utf8Count:", "x") as Int })
        for part in ["NUL at UTF-8 offset 1", "utf8Count:", cls.name, "the hook"] {
            XCTAssertTrue(e.description.contains(part), "\(part) in \(e)")
        }
    }

    func testStringsThroughEveryForwardingStage() throws {
        // Stage 2: a forwarding target that has the method.
        let fwd = try makeClass("StringsForwarder")
        let target = obj!
        try fwd.setForwardingTarget { _, sel in sel == "echo:" ? target.ref : nil }
        // Stages 3-4: a signature and a handler that answers with a String.
        try fwd.setMethodSignature { _, sel in sel == "shout:" ? try Signature("*@:*") : nil }
        try fwd.setForwardInvocation { inv in
            let s: String = try inv.argument(at: 0)
            try inv.setReturnValue(s.uppercased() + "¡")
        }
        let f = try fwd.createInstance()
        let before = sf_lent_mark()
        for s in samples.prefix(5) {
            XCTAssertEqual(try f.send("echo:", s) as String, s + "!")
            XCTAssertEqual(try f.send("shout:", s) as String, s.uppercased() + "¡")
            XCTAssertEqual(try f.send("shout:", s).stringValue, s.uppercased() + "¡")
        }
        XCTAssertEqual(sf_lent_mark(), before)
    }

    func testAProxyStyleHandlerRelaysAStringReturnToSwiftAndCCallers() throws {
        // forwardInvocation: invokes the record on another object: the record adopts the
        // returned string, and copying it out to the caller lends a fresh copy.
        let relay = try makeClass("StringsRelay")
        let target = obj!
        try relay.setMethodSignature { _, sel in sel == "echo:" ? try Signature("*@:*") : nil }
        try relay.setForwardInvocation { inv in try inv.invoke(target: target) }
        let r = try relay.createInstance()
        let before = sf_lent_mark()
        XCTAssertEqual(try r.send("echo:", "relayed ü") as String, "relayed ü!")
        XCTAssertEqual(sf_lent_mark(), before)
        let pool = sf_autoreleasePoolPush()
        var out: UnsafePointer<CChar>? = nil
        let status = "from C".withCString { arg -> sf_status in
            var a: UnsafePointer<CChar>? = arg
            return withUnsafeMutablePointer(to: &a) { p in
                var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(p)]
                return sf_msg_send(r.raw, sf_sel_registerName("echo:"), &out, &args)
            }
        }
        XCTAssertEqual(status, SF_OK)
        XCTAssertEqual(out.map { String(cString: $0) }, "from C!", "valid after the record died")
        XCTAssertEqual(sf_autoreleasePoolPop(pool), SF_OK)
        XCTAssertEqual(sf_lent_mark(), before)
    }

    func testInvocationsOwnTheirStrings() throws {
        let before = sf_lent_mark()
        let inv = Invocation(signature: try Signature("*@:*"), target: obj, selector: "echo:")
        try inv.setArgument(String("temporäry".reversed()), at: 0)
        XCTAssertEqual(sf_lent_mark(), before, "the record owns the argument's copy")
        try inv.invoke()
        XCTAssertEqual(sf_lent_mark(), before, "and the returned one")
        XCTAssertEqual(try inv.returnValue(as: String.self), "yräropmet!")
        XCTAssertEqual(try inv.argument(at: 0, as: String.self), "yräropmet")
        try inv.setReturnValue("set")
        XCTAssertEqual(try inv.returnValue(as: String.self), "set")
        XCTAssertEqual(inv.returnValue.stringValue, "set")
        XCTAssertThrowsError(try inv.setArgument("bad\0", at: 0))
        XCTAssertEqual(sf_lent_mark(), before)
    }

    func testAStreamDeliversStringsThatOutliveTheCall() async throws {
        let stream = try obj.messages("echo:", .afterOriginal)
        for s in ["first", "sécond", ""] { _ = try obj.send("echo:", s) as String }
        var seen: [(String?, String?)] = []
        for await call in stream {
            seen.append((call.arguments.first?.stringValue, call.returnValue?.stringValue))
            if seen.count == 3 { break }
        }
        XCTAssertEqual(seen.map(\.0), ["first", "sécond", ""])
        XCTAssertEqual(seen.map(\.1), ["first!", "sécond!", "!"])
    }

    func testOwnedAndBorrowedCStrings() throws {
        let owned = try CString(copying: "héllo")
        XCTAssertTrue(owned.ownsCharacters)
        "héllo".withCString { p in
            let borrowed = CString(p)
            XCTAssertFalse(borrowed.ownsCharacters)
            XCTAssertEqual(borrowed, owned, "equal by characters")
            XCTAssertEqual(borrowed.hashValue, owned.hashValue)
        }
        XCTAssertNotEqual(CString(nil), owned)
        XCTAssertEqual(CString(nil), CString(copying: nil as UnsafePointer<CChar>?))
    }
}

/// Strings from 8 threads at once: every result is the thread's own, nothing stays lent.
final class StringValueConcurrencyTests: XCTestCase {
    func testEightThreadsSendStringsThroughAHookedMethod() throws {
        let cls = try makeClass("StringsConcurrent")
        try cls.addMethod("tag:") { (_: ObjectRef, s: String) -> String in "<" + s + ">" }
        let hooked = Locked(0)
        let token = try cls.hook("tag:", .before) { ctx in
            let s: String = try ctx.argument(at: 0)
            if s.hasSuffix("7") { hooked.withLock { $0 += 1 } }
        }
        defer { token.remove() }
        let obj = try cls.createInstance()
        let failures = Locked<[String]>([])
        runThreads(8) { t in
            let before = sf_lent_mark()
            for i in 0..<1_000 {
                let s = "thread \(t) ü \(i)"
                do {
                    let r: String = try obj.send("tag:", s)
                    if r != "<" + s + ">" { failures.append("\(s) -> \(r)") }
                } catch {
                    failures.append("\(error)")
                }
            }
            if sf_lent_mark() != before { failures.append("thread \(t) left \(sf_lent_mark() - before) lent") }
        }
        XCTAssertEqual(failures.current, [])
        XCTAssertEqual(hooked.current, 8 * 100)
    }
}
