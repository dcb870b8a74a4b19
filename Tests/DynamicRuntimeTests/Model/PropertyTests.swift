import TestSupport
import CDynamicRuntime
import Glibc
import XCTest
@testable import DynamicRuntime

/// Properties with attribute strings (objc4 test/addProperty.m, test/propertyDesc.m;
/// libobjc2 Test/PropertyAttributeTest.m): declare, replace, list, look up, and refuse
/// malformed attributes with a typed error.
final class PropertyTests: XCTestCase {
    func testAddListAndLookUp() throws {
        let base = try RuntimeClass(name: uniqueClassName("PRBase"))
        let sub = try RuntimeClass(name: uniqueClassName("PRSub"), superclass: base)
        let name = try base.addProperty("name", attributes: #"T@"NSString",C,N,V_name"#)
        try sub.addProperty("count", attributes: "Tq,R,N")
        try sub.addProperty("frame", attributes: [PropertyAttribute("T", "{CGRect={CGPoint=dd}{CGSize=dd}}"), PropertyAttribute("N")])
        XCTAssertEqual(name.attributeString, #"T@"NSString",C,N,V_name"#)
        XCTAssertEqual(name.attributes.map(\.name), ["T", "C", "N", "V"])
        XCTAssertEqual(name.value(of: "T"), #"@"NSString""#)
        XCTAssertEqual(name.value(of: "V"), "_name")
        XCTAssertEqual(name.value(of: "N"), "")
        XCTAssertNil(name.value(of: "R"))
        XCTAssertEqual(sub.properties.map(\.name), ["count", "frame"], "own properties, in order")
        XCTAssertEqual(sub.property(named: "name"), name, "class_getProperty searches superclasses")
        XCTAssertNil(base.property(named: "count"))
        let classProperty = try base.metaclass.addProperty("shared", attributes: "T@,&")
        XCTAssertEqual(base.metaclass.property(named: "shared"), classProperty)
        XCTAssertNil(base.property(named: "shared"))
    }

    func testReplaceKeepsTheHandleAndOldStrings() throws {
        let cls = try RuntimeClass(name: uniqueClassName("PRReplace"))
        let p = try cls.addProperty("value", attributes: "Ti,N")
        let old = try XCTUnwrap(sf_property_getAttributes(p.raw))
        let q = try cls.replaceProperty("value", attributes: "Tq,R,V_v")
        XCTAssertEqual(p, q, "same handle, as objc4")
        XCTAssertEqual(p.attributeString, "Tq,R,V_v")
        XCTAssertEqual(String(cString: old), "Ti,N", "a C reader's string stays valid")
        XCTAssertThrowsError(try cls.addProperty("value", attributes: "Ti")) { error in
            guard case let .invalidArgument(context)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "value")
        }
        let added = try cls.replaceProperty("other", attributes: "Td")
        XCTAssertEqual(cls.properties, [p, added])
    }

    func testMalformedAttributeStringsAreTypedErrors() throws {
        let cls = try RuntimeClass(name: uniqueClassName("PRBad"))
        let bad: [(String, Int, String)] = [
            ("", 0, "empty"),
            ("N,Ti", 2, "first"),
            ("T", 0, "needs a value"),
            ("Tq,,N", 3, "empty attribute"),
            ("Tq,N,", 5, "empty attribute"),
            ("Tq,X", 3, "unknown attribute"),
            ("Tq,Nx", 4, "takes no value"),
            ("Tq,N,N", 5, "twice"),
            ("Tq,C,&", 0, "at most one"),
            ("Tq,V_x,N", 7, "last"),
            ("T{Bad=", 1, "property type"),
            ("Tqq", 2, "one type"),
            (#"T@"Open,N"#, 0, "unterminated quote"),
            ("Tq,G", 3, "needs a value"),
        ]
        for (text, offset, word) in bad {
            XCTAssertThrowsError(try cls.addProperty("p", attributes: text), text) { error in
                guard case let .malformedEncoding(context)? = error as? RuntimeError, let reason = context.reason else { return XCTFail("\(text): \(error)") }
                let (encoding, at) = (context.actual, context.offset)
                XCTAssertEqual(encoding, text)
                XCTAssertEqual(at, offset, "\(text): \(reason)")
                XCTAssertTrue(reason.contains(word), "\(text): \(reason)")
            }
        }
        XCTAssertThrowsError(try cls.addProperty("p", attributes: [PropertyAttribute("TT", "q")]))
        XCTAssertThrowsError(try cls.addProperty("p", attributes: [PropertyAttribute("T", "q"), PropertyAttribute("G", "a,b")]))
        XCTAssertThrowsError(try cls.addProperty("", attributes: "Tq"))
        XCTAssertTrue(cls.properties.isEmpty, "nothing was declared")
        XCTAssertNoThrow(try cls.addProperty("block", attributes: "T@?,C,N"), "blocks are a property type")
    }

    func testCAPI() throws {
        let cls = try RuntimeClass(name: uniqueClassName("PRC"))
        let attrs: [(String, String)] = [("T", "@\"Thing\""), ("&", ""), ("N", ""), ("V", "_thing")]
        let ok = withCAttributes(attrs) { sf_class_addProperty(cls.raw, "thing", $0, UInt32($1)) }
        XCTAssertTrue(ok)
        let p = try XCTUnwrap(sf_class_getProperty(cls.raw, "thing"))
        XCTAssertEqual(String(cString: sf_property_getName(p)), "thing")
        XCTAssertEqual(String(cString: sf_property_getAttributes(p)), #"T@"Thing",&,N,V_thing"#)
        let v = try XCTUnwrap(sf_property_copyAttributeValue(p, "V"))
        XCTAssertEqual(String(cString: v), "_thing")
        free(v)
        XCTAssertNil(sf_property_copyAttributeValue(p, "R"))
        var n: UInt32 = 0
        let list = try XCTUnwrap(sf_property_copyAttributeList(p, &n))
        XCTAssertEqual(n, 4)
        XCTAssertEqual((0..<Int(n)).map { String(cString: list[$0].name) + String(cString: list[$0].value) }, ["T@\"Thing\"", "&", "N", "V_thing"])
        sf_free(list)
        XCTAssertTrue(sf_class_addPropertyWithAttributes(cls.raw, "flag", "TB,N,GisFlag"))
        let props = try XCTUnwrap(sf_class_copyPropertyList(cls.raw, &n))
        XCTAssertEqual(n, 2)
        XCTAssertEqual(props[1], sf_class_getProperty(cls.raw, "flag"))
        sf_free(props)
        XCTAssertEqual(withCAttributes([("T", "i")]) { sf_class_replaceProperty(cls.raw, "flag", $0, UInt32($1)) }, SF_OK)
        XCTAssertEqual(String(cString: sf_property_getAttributes(sf_class_getProperty(cls.raw, "flag"))), "Ti")
        // Bad input.
        XCTAssertFalse(sf_class_addPropertyWithAttributes(cls.raw, "bad", "Tq,Z"))
        XCTAssertEqual(sf_last_error(), SF_ERR_BAD_ENCODING)
        XCTAssertFalse(withCAttributes([("N", "")]) { sf_class_addProperty(cls.raw, "bad", $0, UInt32($1)) })
        XCTAssertEqual(sf_last_error(), SF_ERR_BAD_ENCODING)
        XCTAssertFalse(sf_class_addProperty(cls.raw, "bad", nil, 2))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertFalse(sf_class_addPropertyWithAttributes(nil, "bad", "Tq"))
        XCTAssertNil(sf_property_getName(OpaquePointer(bitPattern: 0x1234)), "not a property: refused, not read")
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(sf_class_getProperty(cls.raw, "bad"))
        XCTAssertNil(sf_class_copyPropertyList(try RuntimeClass(name: uniqueClassName("PRNone")).raw, &n))
        XCTAssertEqual(n, 0)
    }

    private func withCAttributes<R>(_ attrs: [(String, String)], _ body: (UnsafePointer<sf_property_attribute_t>, Int) -> R) -> R {
        let strings = attrs.map { (strdup($0.0)!, strdup($0.1)!) }
        defer { for (a, b) in strings { free(a); free(b) } }
        let list = strings.map { sf_property_attribute_t(name: $0.0, value: $0.1) }
        return list.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
