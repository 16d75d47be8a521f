# claw_memory.terms: the tokeniser shared by ranked recall and history search.
from mptest import eq, ok

from claw_memory.terms import stem, term_hash, terms


def _t(s):
    return [t.decode() for t in terms(s)]


def test_english_words_are_lowered_stopped_and_stemmed():
    eq(_t("The user's cats liked running in the mornings!"), ["user", "cat", "like", "run", "morn"])
    eq(_t("I am what I am"), [], "only stop words")
    eq(_t("a b c x y z"), [], "single letters dropped")


def test_stemming_both_ways():
    # Each pair must meet: a question's word and a fact's word.
    for a, b in (("cats", "cat"), ("cities", "city"), ("studied", "study"), ("studying", "study"),
                 ("liked", "like"), ("making", "make"), ("hoping", "hope"), ("running", "run"),
                 ("hopped", "hop"), ("boxes", "box"), ("watches", "watch"), ("dishes", "dish"),
                 ("agreed", "agree"), ("walked", "walking"), ("loves", "loved"), ("meetings", "meeting"),
                 ("buzzing", "buzz"), ("fizzed", "fizz"), ("falling", "fall"), ("missed", "miss")):
        eq(stem(a.encode()), stem(b.encode()), "%s ~ %s" % (a, b))
    for w in ("bus", "analysis", "glass", "sing", "feed", "tea", "news"):
        ok(len(stem(w.encode())) >= 3, "kept whole enough: " + w)
    eq(stem(b"bus"), b"bus", "-us is no plural")
    eq(stem(b"glass"), b"glass", "-ss is no plural")
    eq(stem(b"sing"), b"sing", "no vowel before -ing: not a suffix")
    eq(stem(b"feed"), b"feed", "-eed on a one-syllable stem stays")
    for w in (b"thing", b"using", b"icing", b"owing"):
        eq(stem(w), w, "a five-letter word ending -ing is no -ing form")


def test_two_letter_words_are_terms_single_letters_of_any_script_are_not():
    eq(_t("tv in the UK, go"), ["tv", "uk", "go"], "two letters: a term unless a stop word")
    eq(_t("\u00e4 \u00e9 \u00fc \u00e0 \u03b1 x"), [], "one letter, ASCII or not: no term")
    eq(_t("ann\u00e9e \u00e0 No\u00ebl"), ["ann\u00e9e", "no\u00ebl"], "the French preposition dropped")


def test_digits_are_terms():
    eq(_t("Meeting at 10:30 on 2026-12-24 in room42"), ["meet", "10", "30", "2026", "12", "24", "room", "42"])
    eq(_t("v2 4k"), ["2", "4"], "one-letter parts of mixed words dropped, digits kept")


def test_cjk_bigrams():
    eq(_t("绿茶"), ["绿茶"])
    eq(_t("乌龙茶"), ["乌龙", "龙茶"])
    eq(_t("茶"), ["茶"], "a lone character is its own term")
    eq(_t("我喜欢喝绿茶。每天早上"), ["我喜", "喜欢", "欢喝", "喝绿", "绿茶", "每天", "天早", "早上"],
       "CJK punctuation separates runs")
    eq(_t("東京に住んでいます"), ["東京", "京に", "に住", "住ん", "んで", "でい", "いま", "ます"], "kana")
    eq(_t("서울에 살아요"), ["서울", "울에", "살아", "아요"], "Hangul")


def test_mixed_scripts():
    eq(_t("I love 绿茶 and oolong"), ["love", "绿茶", "oolong"])
    eq(_t("iPhone15 手机壳"), ["iphone", "15", "手机", "机壳"])
    eq(_t("Привет МИР, Café ÉTÉ naïve"), ["привет", "мир", "café", "été", "naïve"], "other scripts lowered")
    eq(_t("Ｆｕｌｌ－ｗｉｄｔｈ　１２３"), ["full", "width", "123"], "full-width forms")


def test_separators_and_hostile_text():
    eq(_t(""), [])
    eq(_t("，。！？、"), [], "only CJK punctuation")
    eq(_t("emoji 😀 here\x00\x01\ttabs"), ["emoji", "tab"], "emoji and control characters separate")
    eq(_t(b"bytes \xe7\xbb\xbf\xe8\x8c\xb6"), ["byte", "绿茶"], "UTF-8 bytes in")
    long = "x" * 100 + "y"
    eq(len(terms(long)[0]), 32, "a term is at most 32 bytes")
    eq(len(_t("word " * 2000)), 2000, "repeats kept")


def test_a_long_run_of_separators_is_split_like_a_short_one():
    # MicroPython's re recurses once per byte of a run it matches: a ruled line, ASCII art or
    # a run of blank lines of a few thousand bytes exceeded the C stack (RuntimeError), and a
    # record holding one made every search of its chat fail while indexing it
    for sep in ("=", " ", "\n", "|-", "=\u3002"):
        run = sep * 3000
        eq(_t("Tea " + run + "coffee9 " + run + " 绿茶"), ["tea", "coffee", "9", "绿茶"], repr(sep))
    eq(_t("caf\u00e9 ABC " + "-" * 5000 + " \u00c9t\u00e9"), _t("caf\u00e9 ABC - \u00c9t\u00e9"),
       "the same terms as with a short run")


def test_term_hash_is_a_small_int():
    h = term_hash(b"tea")
    ok(0 <= h < 2 ** 30, "30 bits")
    eq(h, term_hash("tea".encode()), "stable")
    ok(term_hash(b"tea") != term_hash(b"coffee"), "different terms differ")
