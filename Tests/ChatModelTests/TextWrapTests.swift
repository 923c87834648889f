import ChatModel
import Testing

@Suite struct TextWrapTests {
    @Test func wrapsAtSpacesAndDropsTheSpaceOnTheBreak() {
        #expect(TextWrap.wrap("hello world", width: 5) == ["hello", "world"])
        #expect(TextWrap.wrap("hello world", width: 8) == ["hello ", "world"])
        #expect(TextWrap.wrap("hello world", width: 11) == ["hello world"])
        #expect(TextWrap.wrap("a b c d", width: 3) == ["a b", "c d"])
    }

    @Test func breaksLongWordsBetweenGraphemes() {
        #expect(TextWrap.wrap("abcdefgh", width: 3) == ["abc", "def", "gh"])
        #expect(TextWrap.wrap("see https://example.com/abc", width: 10) == ["see ", "https://ex", "ample.com/", "abc"])
    }

    @Test func newlinesStartRowsAndEmptyLinesStay() {
        #expect(TextWrap.wrap("a\n\nb", width: 10) == ["a", "", "b"])
        #expect(TextWrap.wrap("", width: 10) == [""])
    }

    @Test func wideCharactersStayWhole() {
        #expect(TextWrap.wrap("世界你好", width: 4) == ["世界", "你好"])
        #expect(TextWrap.wrap("世界你好", width: 3) == ["世", "界", "你", "好"])
        #expect(TextWrap.wrap("a世b", width: 2) == ["a", "世", "b"])
        #expect(TextWrap.wrap("世界", width: 1) == ["世", "界"], "a grapheme wider than the row gets a row of its own")
        #expect(TextWrap.wrap("👨‍👩‍👧‍👦👍🏽e\u{301}", width: 2) == ["👨‍👩‍👧‍👦", "👍🏽", "e\u{301}"])
    }

    @Test(arguments: 1...16)
    func everyWidthKeepsEveryGraphemeInOrderAndFits(width: Int) {
        let texts = ["The quick 世界 fox 😀 jumps over the lazy dog", "e\u{301}te\u{301} 👨‍👩‍👧‍👦🇫🇷 終わり。", "aaaaaaaaaaaaaaaaaaaaaaa b", "  two  spaces  "]
        for text in texts {
            let rows = TextWrap.wrap(text, width: width)
            for row in rows {
                #expect(DisplayWidth.of(row) <= width || row.count == 1, "\(row) in \(width) columns")
            }
            #expect(rows.joined().filter { $0 != " " } == text.filter { $0 != " " }, "no grapheme lost or split at width \(width)")
            #expect(rows.joined().count <= text.count)
        }
    }

    @Test func rowRangesCutBetweenGraphemesOnly() {
        let characters = Array("ab世界c")
        #expect(TextWrap.rowRanges(characters, width: 3) == [0..<2, 2..<3, 3..<5])
        #expect(TextWrap.rowRanges([], width: 3) == [0..<0])
        #expect(TextWrap.rowRanges(Array("世"), width: 1) == [0..<1])
    }

    @Test func fitAndPadCountColumns() {
        #expect(TextWrap.fit("hello world", width: 5) == "hell…")
        #expect(TextWrap.fit("世界", width: 3) == "世…")
        #expect(TextWrap.fit("世界", width: 4) == "世界")
        #expect(TextWrap.fit("abc", width: 0) == "")
        #expect(TextWrap.padded("世", width: 4) == "世  ")
    }
}
