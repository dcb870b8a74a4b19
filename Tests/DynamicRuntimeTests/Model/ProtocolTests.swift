import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Protocols from Swift (libobjc2 Test/ProtocolCreation.m, objc4 test/protocol.m); the C API
/// is covered by ConformanceCTests.testProtocols.
final class ProtocolTests: XCTestCase {
    private func made(_ name: String, incorporating: [RuntimeProtocol] = [],
                      _ methods: [(String, String, Bool, Bool)] = []) throws -> RuntimeProtocol {
        let p = try RuntimeProtocol.allocate(name: name)
        for q in incorporating { try p.addProtocol(q) }
        for (sel, types, req, inst) in methods {
            try p.addMethodDescription(Selector(sel), types: types, isRequired: req, isInstanceMethod: inst)
        }
        try p.register()
        return p
    }

    func testConformanceThroughSuperclassesAndIncorporatedProtocols() throws {
        let copying = try made("PTCopying", [("copy", "@@:", true, true)])
        let coding = try made("PTCoding", incorporating: [copying], [("encode:", "v@:@", true, true), ("version", "q@:", false, false)])
        let base = try RuntimeClass(name: "PTBase")
        let sub = try RuntimeClass(name: "PTSub", superclass: base)
        XCTAssertFalse(sub.conforms(to: copying))
        XCTAssertTrue(try base.addProtocol(coding))
        XCTAssertFalse(try base.addProtocol(coding), "already adopted")
        XCTAssertTrue(sub.conforms(to: coding))
        XCTAssertTrue(sub.conforms(to: copying))
        XCTAssertTrue(sub.metaclass.conforms(to: copying), "asked of the metaclass: the class's answer")
        XCTAssertEqual(base.protocols, [coding])
        XCTAssertEqual(sub.protocols, [])
        XCTAssertTrue(try sub.createInstance().conforms(to: copying))
        XCTAssertTrue(coding.conforms(to: copying))
        XCTAssertFalse(copying.conforms(to: coding))
        XCTAssertEqual(coding.protocols, [copying])
        XCTAssertEqual(RuntimeProtocol.named("PTCoding"), coding)
        XCTAssertTrue(RuntimeProtocol.allProtocols.contains(copying))

        XCTAssertEqual(coding.methodDescription(for: "copy", isRequired: true, isInstanceMethod: true)?.types, "@@:")
        XCTAssertEqual(coding.methodDescription(for: "version", isRequired: false, isInstanceMethod: false)?.types, "q@:")
        XCTAssertNil(coding.methodDescription(for: "version", isRequired: true, isInstanceMethod: false))
        XCTAssertNil(coding.methodDescription(for: "version", isRequired: false, isInstanceMethod: true))
        XCTAssertEqual(coding.methodDescriptions(isRequired: true, isInstanceMethod: true).map(\.selector), ["encode:"])
    }

    func testBadInput() throws {
        let p = try RuntimeProtocol.allocate(name: "PTBad")
        XCTAssertThrowsError(try RuntimeProtocol.allocate(name: "PTBad")) { XCTAssertEqual($0 as? RuntimeError, .duplicateProtocol(.init(className: "PTBad"))) }
        XCTAssertThrowsError(try RuntimeProtocol.allocate(name: ""))
        XCTAssertThrowsError(try p.addMethodDescription(".cxx_destruct", types: "v@:", isRequired: true, isInstanceMethod: true)) {
            guard case .reservedSelector(let context)? = $0 as? RuntimeError, context.selector == ".cxx_destruct" else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try p.addMethodDescription("x", types: "{bad", isRequired: true, isInstanceMethod: true)) {
            guard case .malformedEncoding? = $0 as? RuntimeError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try p.addProtocol(p))
        let unregistered = try RuntimeProtocol.allocate(name: "PTUnregistered")
        XCTAssertThrowsError(try p.addProtocol(unregistered))
        XCTAssertThrowsError(try RuntimeClass(name: "PTAdopter").addProtocol(unregistered))
        XCTAssertNil(RuntimeProtocol.named("PTUnregistered"))
        try p.register()
        XCTAssertThrowsError(try p.register()) { XCTAssertEqual($0 as? RuntimeError, .duplicateProtocol(.init(className: "PTBad"))) }
        XCTAssertThrowsError(try p.addMethodDescription("late", types: "v@:", isRequired: true, isInstanceMethod: true))
        XCTAssertNil(RuntimeProtocol.validated(UnsafeRawPointer(bitPattern: 0x1000)))
    }

    /// A forwarding proxy answers for its target's protocols, as NSProxy does.
    func testAProxyAnswersForItsTargetsProtocols() throws {
        let drawing = try made("PTDrawing", [("draw", "q@:", true, true)])
        let shape = try RuntimeClass(name: "PTShape")
        try shape.addProtocol(drawing)
        try shape.addMethod("draw") { (_: ObjectRef) -> Int in 5 }
        let proxyClass = try Proxy.makeClass(name: "PTShapeProxy")
        XCTAssertFalse(proxyClass.conforms(to: drawing))
        let target = try shape.createInstance()
        let proxy = try Proxy.create(proxyClass, wrapping: target)
        XCTAssertTrue(proxy.conforms(to: drawing))
        XCTAssertTrue(sf_object_conformsToProtocol(proxy.raw, drawing.raw))
        XCTAssertEqual(try proxy.send("draw") as Int, 5)
        let other = try made("PTOther")
        XCTAssertFalse(proxy.conforms(to: other))
    }
}
