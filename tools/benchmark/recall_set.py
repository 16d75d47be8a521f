"""The retrieval set of the recall benchmark: memory items as an extraction or a user would
store them, and questions as people ask them, with their gold items. Made by this generator
(deterministic: the same set on every machine), not downloaded.

How it is made. Each store is one household's memory at capacity (128 items): 16 people
(the user and 15 relatives, friends and colleagues, each with a name) times 8 kinds of fact
(city, job, birthday, allergy, instrument, car, pet, a code), so every fact has 15 distractors
of the same shape that differ in the person and the value. English stores and Chinese stores
use their own names, values and phrasing. Questions come from hand-written paraphrase
templates per kind that share few words with the fact ("What does Anna do for a living?" for
"User's sister Anna works as a nurse"; "安娜做什么工作？" for "用户的姐姐安娜是护士"), asked by
the person's name or relation, and in four groups:
- plain: one fact, one gold item;
- two facts: two people's facts of one kind ("Do Anna and Tom live in the same city?"), both
  gold;
- updated: the fact was replaced later (the store's update: a new item, the old one
  superseded); only the new item is gold, the old one must never come back;
- forgotten: the fact was forgotten; nothing is gold and it must never come back.
Items carry tags (the kind, sometimes the person) and keywords as extraction writes them.
"""

import random

N_PEOPLE = 16
KINDS = ("city", "job", "birthday", "allergy", "instrument", "car", "pet", "code")

EN = {
    "people": [("User", "I", "my"), ("User's sister Anna", "Anna", "Anna's"), ("User's brother Tom", "Tom", "Tom's"),
               ("User's mother Maria", "Maria", "Maria's"), ("User's father Jorge", "Jorge", "Jorge's"),
               ("User's friend Priya", "Priya", "Priya's"), ("User's colleague Sam", "Sam", "Sam's"),
               ("User's neighbour Omar", "Omar", "Omar's"), ("User's son Leo", "Leo", "Leo's"),
               ("User's daughter Mia", "Mia", "Mia's"), ("User's boss Linda", "Linda", "Linda's"),
               ("User's cousin Ravi", "Ravi", "Ravi's"), ("User's aunt Greta", "Greta", "Greta's"),
               ("User's uncle Felix", "Felix", "Felix's"), ("User's friend Chloe", "Chloe", "Chloe's"),
               ("User's partner Noah", "Noah", "Noah's")],
    "values": {
        "city": ["Lisbon", "Porto", "Berlin", "Munich", "Osaka", "Toronto", "Denver", "Madrid", "Dublin", "Oslo",
                 "Seattle", "Nairobi", "Lima", "Krakow", "Hanoi", "Perth", "Austin", "Leeds", "Turin", "Quito"],
        "job": ["nurse", "teacher", "pilot", "plumber", "architect", "dentist", "baker", "lawyer", "chef",
                "electrician", "journalist", "pharmacist", "carpenter", "librarian", "firefighter", "accountant",
                "surgeon", "translator", "gardener", "welder"],
        "birthday": ["March 3", "July 19", "October 2", "January 27", "May 14", "August 8", "December 11",
                     "April 30", "June 6", "September 23", "February 16", "November 4", "March 21", "July 1",
                     "October 28", "May 9", "January 5", "August 30", "June 18", "December 24"],
        "allergy": ["peanuts", "shellfish", "cats", "pollen", "penicillin", "gluten", "eggs", "strawberries",
                    "bee stings", "latex", "sesame", "soy", "walnuts", "dust mites", "milk", "kiwi", "mustard",
                    "celery", "mango", "lupin"],
        "instrument": ["violin", "cello", "piano", "drums", "trumpet", "flute", "guitar", "saxophone", "harp",
                       "clarinet", "ukulele", "banjo", "oboe", "accordion", "trombone", "harmonica", "viola",
                       "bagpipes", "mandolin", "sitar"],
        "car": ["red Toyota Corolla", "blue Honda Civic", "white Tesla Model 3", "grey Volvo XC60",
                "black Ford Focus", "green Mini Cooper", "silver Skoda Octavia", "yellow Fiat Panda",
                "white Kia Niro", "red Mazda MX-5", "blue Renault Clio", "black BMW i3", "grey Subaru Outback",
                "orange VW Beetle", "green Jeep Wrangler", "silver Audi A4", "white Peugeot 208",
                "blue Hyundai Kona", "black Nissan Leaf", "red Seat Ibiza"],
        "pet": ["a dog named Biscuit", "a cat named Miso", "a parrot named Kiwi", "a rabbit named Clover",
                "a dog named Pepper", "a cat named Luna", "a tortoise named Sheldon", "a hamster named Nugget",
                "a dog named Rocco", "a cat named Tofu", "a goldfish named Bubbles", "a ferret named Ziggy",
                "a dog named Maple", "a cat named Pixel", "a gecko named Spike", "a horse named Duke",
                "a dog named Olive", "a cat named Sushi", "a budgie named Sunny", "a pony named Hazel"],
        "code": ["4711", "2580", "9134", "6672", "1357", "8024", "3190", "5546", "7203", "2468", "9981", "1029",
                 "6350", "4407", "8812", "3675", "5093", "7741", "2206", "6128"],
    },
    # fact templates: (content, tags, keywords); {s} subject, {v} value
    "facts": {
        "city": ("{s} lives in {v}", "location", "{v}"),
        "job": ("{s} works as a {v}", "work", "{v}"),
        "birthday": ("{s}'s birthday is on {v}", "birthday", "{v}"),
        "allergy": ("{s} is allergic to {v}", "health", "allergy,{v}"),
        "instrument": ("{s} plays the {v}", "music", "{v}"),
        "car": ("{s} drives a {v}", "car", "{v}"),
        "pet": ("{s} has {v}", "pets", "{v}"),
        "code": ("{s}'s gym locker code is {v}", "codes", "locker,{v}"),
    },
    # questions: {n} the person as asked about ("I"/"my" for the user, the name otherwise)
    "questions": {
        "city": ["Where is {n} living these days?", "Which town does {n} call home?",
                 "Remind me where {n} is based?"],
        "job": ["What does {n} do for a living?", "What's {n_pos} profession?", "Where does {n} work, what job?"],
        "birthday": ["When is {n_pos} birthday?", "What date was {n} born?", "When should I send {n} a card?"],
        "allergy": ["Is {n} allergic to anything?", "What can't {n} eat or touch?", "Any allergies for {n}?"],
        "instrument": ["Which instrument does {n} play?", "What music does {n} make?",
                       "What does {n} practise playing?"],
        "car": ["What car does {n} drive?", "Which vehicle is {n_pos}?", "What does {n} drive around in?"],
        "pet": ["Does {n} have any pets?", "What's the name of {n_pos} animal?", "Tell me about {n_pos} pet."],
        "code": ["What's {n_pos} locker combination at the gym?", "Which code opens {n_pos} gym locker?",
                 "I forgot {n_pos} locker number at the gym."],
    },
    "pair": {
        "city": "Do {a} and {b} live in the same city?", "job": "What jobs do {a} and {b} have?",
        "birthday": "Whose birthday comes first, {a_pos} or {b_pos}?", "allergy": "What are {a} and {b} allergic to?",
        "instrument": "Could {a} and {b} play a duet, what do they play?", "car": "Which cars do {a} and {b} drive?",
        "pet": "What pets do {a} and {b} keep?", "code": "What are the gym locker codes of {a} and {b}?",
    },
    "self": ("I", "my"),
}

ZH = {
    "people": [("用户", "我", "我的"), ("用户的姐姐安娜", "安娜", "安娜的"), ("用户的哥哥大伟", "大伟", "大伟的"),
               ("用户的妈妈秀英", "秀英", "秀英的"), ("用户的爸爸建国", "建国", "建国的"),
               ("用户的朋友小李", "小李", "小李的"), ("用户的同事王磊", "王磊", "王磊的"),
               ("用户的邻居老周", "老周", "老周的"), ("用户的儿子乐乐", "乐乐", "乐乐的"),
               ("用户的女儿朵朵", "朵朵", "朵朵的"), ("用户的老板陈总", "陈总", "陈总的"),
               ("用户的表弟阿杰", "阿杰", "阿杰的"), ("用户的姑姑美玲", "美玲", "美玲的"),
               ("用户的舅舅国强", "国强", "国强的"), ("用户的朋友晓雯", "晓雯", "晓雯的"),
               ("用户的丈夫志明", "志明", "志明的")],
    "values": {
        "city": ["上海", "北京", "杭州", "成都", "深圳", "广州", "南京", "武汉", "西安", "重庆", "苏州", "厦门",
                 "青岛", "大连", "昆明", "长沙", "天津", "沈阳", "郑州", "合肥"],
        "job": ["护士", "老师", "飞行员", "水管工", "建筑师", "牙医", "面包师", "律师", "厨师", "电工", "记者",
                "药剂师", "木匠", "图书管理员", "消防员", "会计", "外科医生", "翻译", "园丁", "焊工"],
        "birthday": ["三月三日", "七月十九日", "十月二日", "一月二十七日", "五月十四日", "八月八日", "十二月十一日",
                     "四月三十日", "六月六日", "九月二十三日", "二月十六日", "十一月四日", "三月二十一日", "七月一日",
                     "十月二十八日", "五月九日", "一月五日", "八月三十日", "六月十八日", "十二月二十四日"],
        "allergy": ["花生", "海鲜", "猫毛", "花粉", "青霉素", "麸质", "鸡蛋", "草莓", "蜂蜇", "乳胶", "芝麻",
                    "大豆", "核桃", "尘螨", "牛奶", "猕猴桃", "芥末", "芹菜", "芒果", "羽扇豆"],
        "instrument": ["小提琴", "大提琴", "钢琴", "架子鼓", "小号", "长笛", "吉他", "萨克斯", "竖琴", "单簧管",
                       "尤克里里", "古筝", "二胡", "手风琴", "长号", "口琴", "中提琴", "琵琶", "笛子", "扬琴"],
        "car": ["红色丰田卡罗拉", "蓝色本田思域", "白色特斯拉", "灰色沃尔沃", "黑色福特福克斯", "绿色迷你",
                "银色斯柯达", "黄色菲亚特", "白色起亚", "红色马自达", "蓝色雷诺", "黑色宝马", "灰色斯巴鲁",
                "橙色甲壳虫", "绿色吉普", "银色奥迪", "白色标致", "蓝色现代", "黑色日产", "红色比亚迪"],
        "pet": ["一只叫豆豆的狗", "一只叫咪咪的猫", "一只叫彩彩的鹦鹉", "一只叫雪球的兔子", "一只叫旺财的狗",
                "一只叫月亮的猫", "一只叫慢慢的乌龟", "一只叫团子的仓鼠", "一只叫大黄的狗", "一只叫豆腐的猫",
                "一条叫泡泡的金鱼", "一只叫闪电的雪貂", "一只叫枫叶的狗", "一只叫像素的猫", "一只叫小刺的壁虎",
                "一匹叫公爵的马", "一只叫橄榄的狗", "一只叫寿司的猫", "一只叫阳光的鹦鹉", "一匹叫榛子的小马"],
        "code": ["4711", "2580", "9134", "6672", "1357", "8024", "3190", "5546", "7203", "2468", "9981", "1029",
                 "6350", "4407", "8812", "3675", "5093", "7741", "2206", "6128"],
    },
    "facts": {
        "city": ("{s}住在{v}", "住址", "{v}"),
        "job": ("{s}的职业是{v}", "工作", "{v}"),
        "birthday": ("{s}的生日是{v}", "生日", "{v}"),
        "allergy": ("{s}对{v}过敏", "健康", "过敏,{v}"),
        "instrument": ("{s}会演奏{v}", "音乐", "{v}"),
        "car": ("{s}开一辆{v}", "汽车", "{v}"),
        "pet": ("{s}养了{v}", "宠物", "{v}"),
        "code": ("{s}健身房储物柜的密码是{v}", "密码", "储物柜,{v}"),
    },
    "questions": {
        "city": ["{n}现在住哪儿？", "{n}家在哪个城市？", "{n}人在哪里生活？"],
        "job": ["{n}是做什么工作的？", "{n}干哪一行？", "{n}的职业是什么来着？"],
        "birthday": ["{n}哪天过生日？", "{n}是几月几号出生的？", "什么时候给{n}送生日礼物？"],
        "allergy": ["{n}有什么过敏的吗？", "{n}不能碰什么东西？", "{n}对什么过敏？"],
        "instrument": ["{n}会什么乐器？", "{n}平时演奏什么？", "{n}学的是哪种乐器？"],
        "car": ["{n}开的是什么车？", "{n}的车是哪款？", "{n}平时开什么车上班？"],
        "pet": ["{n}养宠物了吗？", "{n}家的宠物叫什么？", "说说{n}的宠物。"],
        "code": ["{n}健身房柜子的密码多少？", "{n}储物柜怎么打开？", "我忘了{n}健身房的柜子密码。"],
    },
    "pair": {
        "city": "{a}和{b}住在同一个城市吗？", "job": "{a}和{b}分别做什么工作？", "birthday": "{a}和{b}谁的生日早？",
        "allergy": "{a}和{b}各自对什么过敏？", "instrument": "{a}和{b}能合奏吗？他们演奏什么？",
        "car": "{a}和{b}开什么车？", "pet": "{a}和{b}养了什么宠物？", "code": "{a}和{b}的储物柜密码是多少？",
    },
    "self": ("我", "我的"),
}


def _pos(lang, person):
    return person[2]


def _store(lang, rng, store_no):
    """(items, changes, questions) of one store. Items: dicts with a key, content, tags,
    keywords; changes: ("update", key, new item) / ("forget", key); questions: dicts with
    text, gold keys, group."""
    people = list(lang["people"])
    items = []
    by = {}
    for pi, person in enumerate(people):
        for kind in KINDS:
            v = rng.choice(lang["values"][kind])
            c, tags, kw = lang["facts"][kind]
            key = "s%d-%s-%d" % (store_no, kind, pi)
            tag = tags if pi == 0 or rng.random() < 0.6 else tags + "," + person[1]
            it = {"key": key, "content": c.format(s=person[0], v=v), "tags": tag,
                  "keywords": kw.format(v=v), "person": pi, "kind": kind, "value": v}
            items.append(it)
            by[key] = it
    rng.shuffle(items)
    changes = []
    questions = []
    keys = [it["key"] for it in items]
    rng.shuffle(keys)
    updated, forgotten, rest = keys[:14], keys[14:26], keys[26:]

    def ask(it, group, gold):
        if it["person"] == 0 and lang is EN:
            return  # ("What does I do ...": the user's own facts are asked in Chinese only)
        person = people[it["person"]]
        tmpl = rng.choice(lang["questions"][it["kind"]])
        n = person[1]
        questions.append({"text": tmpl.format(n=n, n_pos=_pos(lang, person)), "gold": gold, "group": group,
                          "about": it["key"]})

    for key in updated:
        old = by[key]
        values = [v for v in lang["values"][old["kind"]] if v != old["value"]]
        v = rng.choice(values)
        c, tags, kw = lang["facts"][old["kind"]]
        new = dict(old, key=key + "-new", content=c.format(s=people[old["person"]][0], v=v),
                   keywords=kw.format(v=v), value=v)
        changes.append(("update", key, new))
        ask(new, "updated", [new["key"]])
    for key in forgotten:
        changes.append(("forget", key))
        ask(by[key], "forgotten", [])
    for key in rest[:100]:
        ask(by[key], "plain", [key])
    kinds = {}
    for key in rest:
        kinds.setdefault(by[key]["kind"], []).append(by[key])
    for kind in KINDS:
        group = kinds.get(kind, [])
        for i in range(0, min(len(group) - 1, 6), 2):
            a, b = group[i], group[i + 1]
            pa, pb = people[a["person"]], people[b["person"]]
            questions.append({"text": lang["pair"][kind].format(a=pa[1], b=pb[1], a_pos=pa[2], b_pos=pb[2]),
                              "gold": [a["key"], b["key"]], "group": "two facts", "about": a["key"]})
    return items, changes, questions


def make(seed=25):
    """The whole set: [{"lang", "items", "changes", "questions"}] (2 English and 2 Chinese
    stores, 512 items and about 600 questions)."""
    rng = random.Random(seed)
    out = []
    for no, (name, lang) in enumerate((("en", EN), ("zh", ZH), ("en", EN), ("zh", ZH))):
        items, changes, questions = _store(lang, rng, no)
        out.append({"lang": name, "items": items, "changes": changes, "questions": questions})
    return out


if __name__ == "__main__":
    s = make()
    print(sum(len(x["items"]) for x in s), "items,", sum(len(x["questions"]) for x in s), "questions")
    for x in s:
        for q in x["questions"][:3] + x["questions"][-2:]:
            print(x["lang"], q["group"], q["text"], q["gold"])
