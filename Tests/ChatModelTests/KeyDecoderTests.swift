import ChatModel
import Testing

@Suite struct KeyDecoderTests {
    private func decode(_ text: String) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.decode(Array(text.utf8))
    }

    @Test func textAndUTF8() {
        #expect(decode("aB") == [.character("a"), .character("B")])
        #expect(decode("é世😀") == [.character("é"), .character("世"), .character("😀")])
        #expect(decode("e\u{301}") == [.character("e"), .character("\u{301}")], "scalars arrive one by one; the editor joins them")
    }

    @Test func controlBytes() {
        #expect(
            decode("\u{1}\u{5}\u{b}\u{15}\u{17}\u{19}") == [.control("a"), .control("e"), .control("k"), .control("u"), .control("w"), .control("y")]
        )
        #expect(decode("\r\t\u{7F}\u{8}") == [.enter, .tab, .backspace, .backspace])
        #expect(decode("\n") == [.control("j")], "LF is Ctrl-J: a newline in the input, not Enter")
        #expect(decode("\u{0}\u{1F}") == [.control(" "), .control("_")])
    }

    @Test func altIsEscapeBeforeAKey() {
        #expect(decode("\u{1B}b\u{1B}f\u{1B}a") == [.alt("b"), .alt("f"), .alt("a")])
        #expect(decode("\u{1B}\r") == [Key.enter.with(.alt)])
        #expect(decode("\u{1B}\u{7F}") == [Key.backspace.with(.alt)])
        #expect(decode("\u{1B}\u{1}") == [Key(.character("a"), [.control, .alt])])
        #expect(decode("\u{1B}世") == [.alt("世")])
        #expect(decode("\u{1B}1\u{1B}0") == [.alt("1"), .alt("0")])
    }

    @Test func cursorAndEditingSequences() {
        #expect(decode("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.up, .down, .right, .left])
        #expect(decode("\u{1B}OA\u{1B}OD\u{1B}OH\u{1B}OF") == [.up, .left, .home, .end], "SS3, application cursor mode")
        #expect(decode("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}[7~\u{1B}[8~") == [.home, .end, .home, .end, .home, .end])
        #expect(decode("\u{1B}[3~\u{1B}[2~\u{1B}[5~\u{1B}[6~") == [.delete, Key(.insert), .pageUp, .pageDown])
        #expect(decode("\u{1B}OP\u{1B}[15~\u{1B}[24~") == [Key(.function(1)), Key(.function(5)), Key(.function(12))])
        #expect(decode("\u{1B}[Z") == [Key(.tab, .shift)])
    }

    @Test func modifiedSequences() {
        #expect(decode("\u{1B}[1;5D\u{1B}[1;5C") == [Key(.left, .control), Key(.right, .control)])
        #expect(decode("\u{1B}[1;3A\u{1B}[1;3B") == [Key(.up, .alt), Key(.down, .alt)])
        #expect(decode("\u{1B}[1;3H\u{1B}[1;3F") == [Key(.home, .alt), Key(.end, .alt)])
        #expect(decode("\u{1B}[1;2C\u{1B}[1;6D\u{1B}[3;5~") == [Key(.right, .shift), Key(.left, [.control, .shift]), Key(.delete, .control)])
        #expect(decode("\u{1B}\u{1B}[A") == [Key(.up, .alt)], "rxvt sends Alt-Up as ESC before the sequence")
        #expect(decode("\u{1B}Od\u{1B}Oc\u{1B}[5^") == [Key(.left, .control), Key(.right, .control), Key(.pageUp, .control)], "rxvt")
        #expect(decode("\u{1B}[13;3u\u{1B}[97;5u") == [Key.enter.with(.alt), .control("a")], "kitty CSI u")
        #expect(decode("\u{1B}[27;5;106~") == [.control("j")], "xterm modifyOtherKeys")
    }

    @Test func reportsThatAreNotKeysAreDropped() {
        #expect(decode("\u{1B}[<0;10;5Mx") == [.character("x")], "SGR mouse")
        #expect(decode("\u{1B}[Ix\u{1B}[99~y") == [.character("x"), .character("y")], "focus in, unknown tilde key")
        var decoder = KeyDecoder()
        #expect(
            decoder.decode([0xFF, 0x61, 0xC3, 0x28]) == [.character("\u{FFFD}"), .character("a"), .character("\u{FFFD}"), .character("(")],
            "invalid UTF-8"
        )
    }

    @Test func bytesSplitAnywhereGiveTheSameKeys() {
        let text = "a\u{1B}[1;5D世\u{1B}b\u{1B}[3~😀\u{1B}OA\u{1B}[200~p\u{1B}q\r\n\u{1B}[201~z"
        let whole = decode(text)
        #expect(whole.count == 9)
        let bytes = Array(text.utf8)
        for split in 1..<bytes.count {
            var decoder = KeyDecoder()
            let keys = decoder.decode(bytes[..<split]) + decoder.decode(bytes[split...])
            #expect(keys == whole, "split at \(split)")
        }
        var decoder = KeyDecoder()
        #expect(bytes.flatMap { decoder.decode([$0]) } == whole, "one byte at a time")
    }

    @Test func aLoneEscapeWaitsForTheTimeout() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]).isEmpty)
        #expect(decoder.hasPendingInput)
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.hasPendingInput)
        #expect(decoder.flush().isEmpty)
        #expect(decoder.decode([0x1B]).isEmpty)
        #expect(decoder.decode(Array("b".utf8)) == [.alt("b")], "a byte before the timeout makes it Alt")
        #expect(decoder.decode(Array("\u{1B}[".utf8)).isEmpty)
        #expect(decoder.flush() == [.alt("[")])
        #expect(decoder.decode([0x1B, 0x1B]).isEmpty)
        #expect(decoder.flush() == [Key.escape.with(.alt)])
        #expect(decoder.decode([0xE4, 0xB8]).isEmpty)
        #expect(decoder.flush() == [.character("\u{FFFD}")], "a cut UTF-8 character")
        #expect(decoder.decode(Array("\u{1B}[1;".utf8)).isEmpty)
        #expect(decoder.flush().isEmpty, "half a sequence is dropped")
    }

    @Test func bracketedPasteIsOneMessage() {
        #expect(decode("\u{1B}[200~line one\r\nline two\rthree\nfour\u{1B}[201~x") == [.paste("line one\nline two\nthree\nfour"), .character("x")])
        #expect(decode("\u{1B}[200~\u{1B}[201~") == [.paste("")])
        #expect(decode("\u{1B}[200~a\u{1B}[Ab\u{1B}c\u{1B}[201~") == [.paste("a\u{1B}[Ab\u{1B}c")], "an ESC inside a paste is text")
    }

    @Test func aPasteWaitsForItsEndAcrossCallsAndTimeouts() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("\u{1B}[200~hello\n".utf8)).isEmpty)
        #expect(decoder.isPasting)
        #expect(!decoder.hasPendingInput)
        #expect(decoder.flush().isEmpty, "the escape timeout does not cut a paste")
        #expect(decoder.decode(Array("world\u{1B}[20".utf8)).isEmpty)
        #expect(decoder.decode(Array("1~\u{1B}".utf8)) == [.paste("hello\nworld")])
        #expect(!decoder.isPasting)
        #expect(decoder.flush() == [.escape])
    }
}
