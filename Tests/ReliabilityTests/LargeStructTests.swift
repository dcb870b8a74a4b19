import TestSupport
import XCTest
import Foundation
@testable import DynamicRuntime

/// A 1 MB struct passed by value would overflow a 256 KiB thread stack inside libffi.
/// Arguments over `SignatureStorage.maxArgumentBytes` (16 KiB) are refused with an error;
/// one of exactly that size still works on such a thread.
final class LargeStructTests: XCTestCase {
    /// A struct of `bytes` bytes (a multiple of 128) built from nested 128-byte structs.
    static func structEncoding(bytes: Int, name: String) -> String {
        let leaf = "{Leaf=" + String(repeating: "q", count: 16) + "}"
        return "{\(name)=" + String(repeating: leaf, count: bytes / 128) + "}"
    }

    /// Runs `body` on a thread with a 256 KiB stack.
    private func onSmallStack(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let t = Thread { body(); done.signal() }
        t.stackSize = 256 * 1024
        t.start()
        done.wait()
    }

    private func assertRefused(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                               _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("\(what): accepted", file: file, line: line)
        } catch let RuntimeError.malformedEncoding(context) {
            let reason = context.reason ?? ""
            XCTAssertTrue(reason.contains("1048576-byte struct") && reason.contains("16384"), reason, file: file, line: line)
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
        }
    }

    func testAOneMegabyteStructArgumentIsRefused() throws {
        let big = Self.structEncoding(bytes: 1 << 20, name: "Big")
        assertRefused("Signature") { _ = try Signature("v@:" + big) }
        let c = try RuntimeClass(name: "Abuse.BigStruct")
        assertRefused("addMethod") { try c.addMethod("take:", types: "v@:" + big, rawBody: { _, _ in }) }
        let o = try c.createInstance()
        let leaf = TypeEncoding.structure(name: "Leaf", fields: Array(repeating: .int64, count: 16))
        let type = TypeEncoding.structure(name: "Big", fields: Array(repeating: leaf, count: (1 << 20) / 128))
        let value = DynamicValue.structure(type, [UInt8](repeating: 7, count: 1 << 20))
        nonisolated(unsafe) var caught: (any Error)?
        onSmallStack {
            do { try o.send("take:", value) } catch { caught = error }
        }
        XCTAssertNotNil(caught, "a send with a 1 MB struct argument did not fail")
        if case let RuntimeError.malformedEncoding(context)? = caught {
            let reason = context.reason ?? ""
            XCTAssertTrue(reason.contains("1048576-byte struct"), reason)
        }
    }

    func testTooManyLargeArgumentsAreRefused() {
        let s = Self.structEncoding(bytes: 16384, name: "S16")
        XCTAssertThrowsError(try Signature("v@:" + String(repeating: s, count: 5))) {
            guard case let RuntimeError.malformedEncoding(context) = $0, let reason = context.reason else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("65536"), reason)
        }
    }

    /// The limits are checked on the canonical form, but the error quotes the text as written,
    /// type qualifiers and all, so the caller can find it.
    func testASizeErrorQuotesTheSignatureAsWritten() {
        let s = Self.structEncoding(bytes: 16384, name: "Q16")
        let written = "v@:" + String(repeating: "r^v" + s, count: 5)
        XCTAssertThrowsError(try Signature(written)) {
            guard case let RuntimeError.malformedEncoding(context) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(context.actual, written)
        }
    }

    func testAStructAtTheLimitIsPassedOnASmallStack() throws {
        let s = Self.structEncoding(bytes: 16384, name: "Edge")
        let c = try RuntimeClass(name: "Abuse.EdgeStruct")
        try c.addMethod("sum:", types: "q@:" + s, rawBody: { ret, args in
            let p = args[2]!.assumingMemoryBound(to: Int64.self)
            var total: Int64 = 0
            for i in 0..<(16384 / 8) { total &+= p[i] }
            ret.storeBytes(of: total, as: Int64.self)
        })
        let o = try c.createInstance()
        var bytes = [UInt8](repeating: 0, count: 16384)
        bytes.withUnsafeMutableBytes { raw in
            for i in 0..<(16384 / 8) { raw.storeBytes(of: Int64(i), toByteOffset: i * 8, as: Int64.self) }
        }
        let value = DynamicValue.structure(try Signature("v@:" + s).argumentTypes[2], bytes)
        nonisolated(unsafe) var result: Result<Int, any Error>?
        onSmallStack { result = Result { try o.send("sum:", value) as Int } }
        XCTAssertEqual(try result?.get(), (0..<2048).reduce(0, +))
    }
}
