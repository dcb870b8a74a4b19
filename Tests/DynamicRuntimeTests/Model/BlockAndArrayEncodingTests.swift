// Blocks (`@?`) and C arrays (`[N type]`) in type encodings, as objc4 accepts them: a block is
// an object pointer, retained where objects are; an array is inline in an ivar or a struct and
// a pointer as a method argument.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class BlockAndArrayEncodingTests: LiveObjectTestCase {
    func testSignaturesParseBlocksAndArraysCanonically() throws {
        let sig = try Signature("v24@0:8@?16[4i]20")
        XCTAssertEqual(sig.argumentTypes, [.object, .selector, .block, .array(count: 4, element: .int32)])
        XCTAssertEqual(sig.encoding, "v@:@?[4i]")
        let nested = try Signature("@?@:[2[3{P=dd}]]")
        XCTAssertEqual(nested.returnType, .block)
        XCTAssertEqual(nested.argumentTypes[2],
                       .array(count: 2, element: .array(count: 3, element: .structure(name: "P", fields: [.double, .double]))))
        XCTAssertEqual(nested.encoding, "@?@:[2[3{P=dd}]]")
        // An array argument is a pointer: one word in the frame, whatever its length.
        XCTAssertEqual(nested.storage.argumentSizes[2], 8)
        XCTAssertTrue(nested.storage.returnsObject, "a block return is +1 like an object")
        XCTAssertEqual(try Signature("v@:[16@]").storage.argumentSizes[2], 8)
    }

    func testMalformedBlocksAndArraysAreRefusedQuotingTheEncoding() {
        let cases: [(String, Int)] = [
            ("v@:[16", 3), ("v@:[x@]", 4), ("v@:[4]", 5), ("v@:[4i", 3), ("v@:[4iq]", 6),
            ("[4i]@:", 0), ("v@:[99999999999i]", 3), ("v@:{Z=[0i]}", 0),
        ]
        for (text, offset) in cases {
            XCTAssertThrowsError(try Signature(text), text) { error in
                guard case RuntimeError.malformedEncoding(let info) = error else { return XCTFail("\(text): \(error)") }
                XCTAssertEqual(info.actual, text)
                XCTAssertEqual(info.offset, offset, "\(text): \(info)")
                XCTAssertEqual((error as? RuntimeError)?.code, SF_ERR_BAD_ENCODING)
            }
        }
    }

    func testIvarsLayArraysOutInline() throws {
        let cls = try makeClass("EncIvars", ivars: [
            ("flag", .int8),
            ("objects", .array(count: 16, element: .object)),
            ("ints", .array(count: 4, element: .int32)),
            ("none", .array(count: 0, element: .int32)),
            ("mixed", .structure(name: "S", fields: [.array(count: 3, element: .int8), .double])),
            ("grid", .array(count: 2, element: .array(count: 3, element: .int16))),
            ("handler", .block),
        ])
        func ivar(_ name: String) throws -> Ivar { try XCTUnwrap(cls.ivar(named: name)) }
        // C's rules, from the first ivar (after the object header, 8-aligned): offsets rounded
        // up to the element's alignment, size count * element, a zero-length array takes none.
        let base = try ivar("flag").offset
        XCTAssertEqual(base % 8, 0)
        let expected: [(String, offset: Int, size: Int)] = [
            ("flag", 0, 1), ("objects", 8, 128), ("ints", 136, 16), ("none", 152, 0),
            ("mixed", 152, 16), ("grid", 168, 12), ("handler", 184, 8),
        ]
        for (name, offset, size) in expected {
            XCTAssertEqual(try ivar(name).offset, base + offset, name)
            XCTAssertEqual(try ivar(name).size, size, name)
        }
        XCTAssertEqual(try ivar("grid").type.encoding, "[2[3s]]")
        XCTAssertEqual(cls.instanceSize, base + 192)
    }

    func testObjectArrayAndBlockIvarsAreStrong() throws {
        let cls = try makeClass("EncStrongIvars", ivars: [("pair", .array(count: 2, element: .object)), ("block", .block)])
        let item = try makeClass("EncItem")
        let gone = Locked(0)
        var owner: Object? = try cls.createInstance()
        var items: [Object] = []
        for _ in 0..<3 {
            let o = try item.createInstance()
            _ = o.ref.onDeallocate { _ in gone.withLock { $0 += 1 } }
            items.append(o)
        }
        // The array's slots through the ivar pointer (+1 each, as a C caller stores them).
        let pair = try XCTUnwrap(cls.ivar(named: "pair"))
        let slots = sf_object_getIvarPointer(owner!.raw, pair.offset)!.assumingMemoryBound(to: sf_id?.self)
        slots[0] = sf_retain(items[0].raw)
        slots[1] = sf_retain(items[1].raw)
        // The block through typed access: retained like an object.
        let blockIvar = try XCTUnwrap(cls.ivar(named: "block"))
        try owner!.setValue(items[2].ref, for: blockIvar)
        XCTAssertEqual(sf_object_retainCount(items[2].raw), 2)
        XCTAssertEqual(try owner!.value(of: blockIvar, as: ObjectRef.self), items[2].ref)
        items.removeAll()
        XCTAssertEqual(gone.current, 0, "the owner holds all three")
        owner = nil
        XCTAssertEqual(gone.current, 3, "released with the owner")
    }

    func testArrayArgumentsArePointersAndBlocksAreRetainedByRecords() throws {
        let cls = try makeClass("EncMethods")
        typealias F = @convention(c) (sf_id?, sf_sel?, UnsafePointer<Int32>?, sf_id?) -> Int64
        let sum: F = { _, _, values, block in
            guard let values else { return -1 }
            return Int64((0..<4).reduce(0) { $0 + values[$1] }) + (block == nil ? 0 : 1000)
        }
        let m = try cls.addMethod("sum:block:", implementation: IMP(unsafeBitCast(sum, to: sf_imp.self)), types: "q@:[4i]@?")
        XCTAssertEqual(m.signature.encoding, "q@:[4i]@?")
        var buf = [CChar](repeating: 0, count: 16)
        sf_method_getArgumentType(m.raw, 2, &buf, buf.count)
        XCTAssertEqual(String(cString: buf), "[4i]")
        sf_method_getArgumentType(m.raw, 3, &buf, buf.count)
        XCTAssertEqual(String(cString: buf), "@?")

        let o = try cls.createInstance()
        let block = try makeClass("EncBlock").createInstance()
        var values: [Int32] = [1, 2, 3, 4]
        let r: Int = try values.withUnsafeMutableBytes { p in try o.send("sum:block:", UnsafeRawPointer(p.baseAddress!), block.ref) }
        XCTAssertEqual(r, 1010)

        // A record retains a block argument as it retains objects.
        var inv: Invocation? = Invocation(signature: try Signature("v@:@?"), target: o, selector: "take:")
        try inv!.setArgument(block.ref, at: 0)
        let before = sf_object_retainCount(block.raw)
        inv!.retainArguments()
        XCTAssertEqual(sf_object_retainCount(block.raw), before + 1)
        inv = nil
        XCTAssertEqual(sf_object_retainCount(block.raw), before)
    }
}
