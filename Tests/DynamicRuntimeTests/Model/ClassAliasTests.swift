import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// `RuntimeClass.registerAlias(_:)` (libobjc2's class_registerAlias_np; the C side is in the
/// conformance scenarios).
final class ClassAliasTests: XCTestCase {
    func testLookupsByTheAliasFindTheClass() throws {
        let cls = try RuntimeClass(name: uniqueClassName("Aliased"))
        let alias = uniqueClassName("AliasName")
        XCTAssertNil(RuntimeClass.named(alias))
        try cls.registerAlias(alias)
        XCTAssertTrue(RuntimeClass.named(alias) === cls)
        XCTAssertEqual(sf_getClass(alias), cls.raw)
        XCTAssertEqual(cls.name, RuntimeClass.named(alias)?.name, "the class keeps its own name")
        XCTAssertEqual(RuntimeClass.allClasses.filter { $0 === cls }.count, 1)
        let obj = try XCTUnwrap(RuntimeClass.named(alias)).createInstance()
        XCTAssertTrue(obj.runtimeClass === cls)
    }

    func testNamesInUseAreRefusedWithTypedErrors() throws {
        let cls = try RuntimeClass(name: uniqueClassName("AliasOwner"))
        let other = try RuntimeClass(name: uniqueClassName("AliasOther"))
        let alias = uniqueClassName("Taken")
        try cls.registerAlias(alias)
        XCTAssertThrowsError(try other.registerAlias(alias)) { error in
            guard case let RuntimeError.duplicateClass(c) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, alias)
            XCTAssertTrue(c.reason?.contains("alias of class '\(cls.name)'") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try cls.registerAlias(alias)) { error in
            guard case RuntimeError.duplicateClass = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try cls.registerAlias(other.name)) { error in
            guard case let RuntimeError.duplicateClass(c) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, other.name)
        }
        XCTAssertTrue(RuntimeClass.named(other.name) === other, "a refused alias changes nothing")
        XCTAssertThrowsError(try RuntimeClass(name: alias)) { error in
            guard case let RuntimeError.duplicateClass(c) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(String(describing: error).contains("alias of class '\(cls.name)'"), "\(c)")
        }
        XCTAssertThrowsError(try cls.registerAlias("")) { error in
            guard case RuntimeError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try cls.metaclass.registerAlias(uniqueClassName("Meta"))) { error in
            guard case RuntimeError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        let pending = try RuntimeClass.allocate(name: uniqueClassName("AliasPending"))
        XCTAssertThrowsError(try pending.registerAlias(uniqueClassName("Early"))) { error in
            guard case let RuntimeError.classNotRegistered(c) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, pending.name)
        }
    }

    func testDisposalRemovesTheAliases() throws {
        let cls = try RuntimeClass(name: uniqueClassName("AliasDisposed"))
        let first = uniqueClassName("First"), second = uniqueClassName("Second")
        try cls.registerAlias(first)
        try cls.registerAlias(second)
        try cls.dispose()
        XCTAssertNil(RuntimeClass.named(first))
        XCTAssertNil(RuntimeClass.named(second))
        XCTAssertThrowsError(try cls.registerAlias(uniqueClassName("Late"))) { error in
            guard case RuntimeError.classNotRegistered = error else { return XCTFail("\(error)") }
        }
        let next = try RuntimeClass(name: first)
        XCTAssertTrue(RuntimeClass.named(first) === next, "the alias's name is free again")
    }
}
