import TestSupport
import XCTest
import CDynamicRuntime
@testable import DynamicRuntime

/// Selector and class names are byte strings, as in Objective-C runtimes.
/// Invalid UTF-8 is kept as it is, and canonically equivalent spellings stay distinct.
final class NameBytesTests: XCTestCase {
    /// Runs `body` with a NUL-terminated copy of `bytes`.
    private func withCName<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    private func bytes(_ p: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: p, count: strlen(p))).map { UInt8(bitPattern: $0) }
    }

    static let invalidA: [UInt8] = Array("rel".utf8) + [0xFF]
    static let invalidB: [UInt8] = Array("rel".utf8) + [0xFE]
    static let composed: [UInt8] = [0x63, 0x61, 0x66, 0xC3, 0xA9]        // "café", U+00E9
    static let decomposed: [UInt8] = [0x63, 0x61, 0x66, 0x65, 0xCC, 0x81] // "cafe" + U+0301

    func testInvalidUTF8SelectorsAreDistinctAndKeepTheirBytes() {
        let a = withCName(Self.invalidA) { sf_sel_registerName($0) }!
        let b = withCName(Self.invalidB) { sf_sel_registerName($0) }!
        XCTAssertNotEqual(a, b, "two invalid UTF-8 names became one selector")
        XCTAssertEqual(withCName(Self.invalidA) { sf_sel_registerName($0) }, a, "not interned")
        XCTAssertEqual(bytes(sf_sel_getName(a)), Self.invalidA)
        XCTAssertEqual(bytes(sf_sel_getName(b)), Self.invalidB)
        let replacement = withCName(Array("rel".utf8) + [0xEF, 0xBF, 0xBD]) { sf_sel_registerName($0) }!
        XCTAssertNotEqual(replacement, a, "an invalid byte was replaced by U+FFFD")
    }

    func testCanonicallyEquivalentSelectorsAreDistinct() {
        let c = withCName(Self.composed + Array(":".utf8)) { sf_sel_registerName($0) }!
        let d = withCName(Self.decomposed + Array(":".utf8)) { sf_sel_registerName($0) }!
        XCTAssertNotEqual(c, d)
        XCTAssertEqual(Selector("caf\u{E9}:").raw, c, "Swift and C disagree on the composed spelling")
        XCTAssertEqual(Selector("cafe\u{301}:").raw, d, "Swift and C disagree on the decomposed spelling")
        XCTAssertNotEqual(Selector("caf\u{E9}"), Selector("cafe\u{301}"))
        XCTAssertEqual(bytes(sf_sel_getName(d)), Self.decomposed + Array(":".utf8))
    }

    func testMethodsUnderEquivalentSelectorsAreDistinct() throws {
        let c = try RuntimeClass(name: "Abuse.Names.Methods")
        try c.addMethod("caf\u{E9}") { (_: ObjectRef) -> Int in 1 }
        try c.addMethod("cafe\u{301}") { (_: ObjectRef) -> Int in 2 }
        let o = try c.createInstance()
        XCTAssertEqual(try o.send("caf\u{E9}") as Int, 1)
        XCTAssertEqual(try o.send("cafe\u{301}") as Int, 2)
    }

    func testClassNamesAreByteStrings() throws {
        let prefix = Array("Abuse.Names.".utf8)
        var made: [sf_class_t] = []
        defer { for c in made { _ = sf_disposeClassPair(c) } }
        for name in [Self.composed, Self.decomposed, Self.invalidA, Self.invalidB] {
            let cls = withCName(prefix + name) { sf_allocateClassPair(nil, $0) }
            XCTAssertNotNil(cls, "\(name): \(String(cString: sf_last_error_message()))")
            guard let cls else { continue }
            sf_registerClassPair(cls)
            made.append(cls)
            XCTAssertEqual(bytes(sf_class_getName(cls)), prefix + name)
            XCTAssertEqual(withCName(prefix + name) { sf_getClass($0) }, cls)
        }
        XCTAssertEqual(Set(made.map { UnsafeRawPointer($0) }).count, 4)
        XCTAssertEqual(RuntimeClass.named("Abuse.Names.caf\u{E9}")?.raw, made.first)
        XCTAssertEqual(RuntimeClass.named("Abuse.Names.cafe\u{301}")?.raw, made.dropFirst().first)
        // A duplicate by bytes is still refused.
        XCTAssertNil(withCName(prefix + Self.invalidA) { sf_allocateClassPair(nil, $0) })
        XCTAssertThrowsError(try RuntimeClass(name: "Abuse.Names.cafe\u{301}"))
    }
}
