"""The Chinese half of the history-search set: two chats, their people, pools, fact frames
and filler (the line format is history_en.py's). Pool names start with `z` so that they
never meet the English ones."""


def _people(sister, brother, mom, dad, partner, friend, colleague, boss, neighbour, son, daughter, dog, cat,
            town, doctor, car):
    return {"sister": sister, "brother": brother, "mom": mom, "dad": dad, "partner": partner, "friend": friend,
            "colleague": colleague, "boss": boss, "neighbour": neighbour, "son": son, "daughter": daughter,
            "dog": dog, "cat": cat, "town": town, "doctor": doctor, "car": car}


def _s(alias, topic, filler):
    return {"alias": alias, "topic": topic, "filler": filler}


CHATS = [
    {"chat": ("qq", "lw_88231"),  # 李伟
     "persona": _people("李娟", "李强", "王秀兰", "李建国", "陈静", "赵磊", "孙悦", "刘总", "周阿姨", "乐乐", "朵朵",
                        "旺财", "咪咪", "杭州", "吴医生", "比亚迪汉"),
     "sessions": [_s("default_01", "home", 34), _s("lvxing", "travel", 40), _s("jiankang", "health", 28),
                  _s("gongzuo", "work", 34), _s("meishi", "food", 12)]},
    {"chat": ("feishu", "oc_9e21f0"),  # 张敏
     "persona": _people("张丽", "张伟", "林美华", "张国强", "黄志明", "许晴", "何平", "郑经理", "马大爷", "小宝", "甜甜",
                        "豆豆", "团团", "成都", "杨医生", "特斯拉"),
     "sessions": [_s("default_01", "home", 44), _s("baobao", "baby", 38), _s("meishi", "food", 22),
                  _s("lvxing", "travel", 8)]},
]


def _nums(fmt, start, step, n):
    return [fmt % (start + i * step) for i in range(n)]


UNIQUE = ("zwifi", "zpw", "zphone", "zperson", "zbank", "zcode", "zerr", "zmoney", "zflight", "zhotel", "zcountry",
          "ztrain", "zsight", "zrest", "zref", "zrental", "zdish", "zsecret", "zallergen", "zfish", "zdiet",
          "zdentist", "zmed", "zhospital", "zgym", "zsport", "zproject", "zroom", "zdate", "zvendor", "zticket",
          "zclass", "zdiaper", "zvaccine", "zclinic", "zbvacc", "zspot", "zcf")

POOLS = {
    "zwifi": "XiaoLi-Guest|Home_5G_访客|HZ-8831-Guest|ZhangJia-WiFi|CD-Home-Guest|TP-LINK_访客",
    "zpw": "hz20240618|mima8888abc|guest@7788|huanying2025|chengdu-1203|fangke666",
    "zphone": _nums("138%08d", 57120419, 1307, 16),
    "zperson": "王建|刘芳|陈刚|杨雪|赵明|黄磊|周婷|吴斌|徐丽|孙浩|马琳|胡军|郭静|何勇|高燕|林涛|罗敏|梁宇|宋佳|郑凯",
    "zbank": "招商银行|工商银行|建设银行|农业银行|交通银行|中国银行",
    "zday": ["5", "8", "10", "15", "20", "25"],
    "zcode": _nums("%06d", 318204, 77113, 8),
    "zplace": ["东门", "南门", "3号楼", "物业中心"],
    "zlocker": ["丰巢", "菜鸟驿站", "速递易"],
    "zerr": "E3|E5|E7|E10|E12|E14",
    "zmoney": _nums("%d元", 180, 70, 30),
    "zyears": ["五", "八", "十"],
    "ztemp": ["24", "25", "26", "27"],
    "zfan": ["低速", "中速", "自动"],
    "zmins": ["30", "60", "90", "120"],
    "zflight": "CA1831|MU5137|CZ3579|HU7605|ZH9812|FM9301|MF8517|3U8881",
    "zcity": "北京|上海|西安|厦门|昆明|青岛|三亚|桂林|大理|哈尔滨",
    "zhhmm": _nums("%d:10", 7, 1, 13) + _nums("%d:35", 7, 1, 13) + _nums("%d:50", 7, 1, 13),
    "zterm": ["1", "2", "3"],
    "zdinner": ["5:30", "6:00", "6:30", "7:00", "7:30", "8:00"],
    "zgate": _nums("%d", 12, 7, 12),
    "zhotel": "汉庭酒店|全季酒店|亚朵酒店|如家酒店|锦江之星|桔子水晶|维也纳酒店|希尔顿欢朋|丽枫酒店|城市便捷",
    "zdate": [m + d for m in ("三月", "五月", "六月", "九月", "十月", "十一月") for d in ("八日", "十二日", "二十日", "二十六日")],
    "zspot": "火车站|鼓楼|西湖|海边|古城南门|地铁二号线|步行街",
    "zcountry": "泰国|越南|土耳其|埃及|肯尼亚|印度|斯里兰卡|柬埔寨",
    "zdays": ["15", "30", "60"],
    "zlead": ["三", "五", "七"],
    "zfee": ["三十五美元", "五十美元", "二百元人民币"],
    "ztrain": "G7512|G1234|D3125|G2019|G1377|D2281",
    "zstation": ["东站", "南站", "北站", "西站"],
    "zcar": ["3号", "5号", "8号", "12号", "15号"],
    "zseat": ["6A", "9C", "11F", "13D", "2B"],
    "zsight": "故宫博物院|兵马俑|鼓浪屿风琴博物馆|石林景区|崂山风景区|大理崇圣寺三塔",
    "zopen": ["8:30-17:00", "9:00-18:00", "8:00-17:30"],
    "zweekday": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    "zprice": ["60", "80", "120", "150", "260", "320"],
    "zrest": "老码头火锅|外婆家|小龙坎|新白鹿|绿茶餐厅|大蓉和|海底捞|楼外楼|巴奴毛肚火锅|蜀大侠|陶陶居|点都德",
    "zcf": "厦门#沙茶面#乌糖沙茶面|西安#肉夹馍#樊记腊汁肉夹馍|昆明#过桥米线#建新园|青岛#烤生蚝#营口路海鲜街|"
           "桂林#米粉#崇善米粉|哈尔滨#锅包肉#老厨家|大理#烤乳扇#人民路夜市|三亚#清补凉#第一市场",
    "zrental": "神州租车|一嗨租车|携程租车|悟空租车",
    "zref": _nums("ZC%d", 6602417, 3319, 8),
    "zstreet": ["春熙路", "宽窄巷子", "延安路", "南山路", "玉林路", "武林路"],
    "zdish": "红烧肉|酸菜鱼|糖醋排骨|回锅肉|东坡肉|麻婆豆腐|梅菜扣肉|可乐鸡翅",
    "zsecret": "一勺冰糖炒糖色|半勺郫县豆瓣|一块陈皮|两颗山楂|一小杯黄酒|几粒花椒",
    "zhours": ["一", "一个半", "两"],
    "zallergen": "花生|虾|芒果|芝麻|牛奶|鸡蛋|菠萝|蟹",
    "zfish": "鲈鱼|桂鱼|多宝鱼|黄花鱼|石斑鱼",
    "zqty": ["四", "六", "八", "十"],
    "zdiet": "轻断食|低碳水饮食|控糖计划|素食月|生酮饮食",
    "zavoid": ["米饭和面条", "甜食", "肉", "油炸食品", "主食"],
    "zdish2": "西红柿炒鸡蛋|宫保鸡丁|鱼香肉丝|可乐鸡翅|蒜蓉西兰花",
    "zingr": ["鸡蛋、番茄、葱、糖", "鸡胸肉、花生、干辣椒、花椒", "猪里脊、木耳、胡萝卜、泡椒", "鸡翅、可乐、姜、生抽",
              "西兰花、蒜、蚝油"],
    "zmins2": ["15", "20", "30", "40"],
    "zdentist": "周|钱|冯|陈|许|蒋",
    "zhospital": "省人民医院|市口腔医院|华西口腔|浙大二院|社区卫生服务中心",
    "zmed": "阿莫西林|氨氯地平|二甲双胍|奥美拉唑|维生素D|甲钴胺",
    "zweeks": ["两", "三", "四", "六"],
    "zsys": _nums("%d", 118, 4, 8),
    "zdia": _nums("%d", 72, 3, 6),
    "zpulse": _nums("%d", 60, 4, 8),
    "zreadings": _nums("%d", 5, 2, 6),
    "zavg": _nums("%d/80", 124, 3, 5),
    "zhour": ["三", "四", "五"],
    "ztemp2": ["18", "19", "20"],
    "zcut": ["两", "三", "四"],
    "zglu": ["5.8", "6.1", "6.4"],
    "zchol": ["5.6", "5.9", "6.2"],
    "zless": ["红肉和油炸食品", "甜食和白米饭", "咸菜和腌肉"],
    "zgym": "乐刻健身|超级猩猩|一兆韦德|威尔士健身",
    "zsport": "普拉提|动感单车|拳击|瑜伽|游泳",
    "zclinic": "社区医院|区疾控中心|市第一人民医院",
    "zvaccine": "九价HPV疫苗|带状疱疹疫苗|乙肝疫苗",
    "zmonths": ["一", "两", "六"],
    "zproject": "星河|凤凰|远航|天枢|青云",
    "zroom": "长江|黄河|泰山|3楼大|A301",
    "zcap": ["350", "450", "500", "600"],
    "zmeal": ["80", "100", "120"],
    "zdays2": ["七", "十五", "三十"],
    "zslides": ["八", "十", "十五"],
    "zarea": ["华东区", "华南区", "西南区", "海外"],
    "zvendor": "博远咨询|云帆科技|明达物流|新锐广告",
    "zticket": _nums("IT-%d", 20417, 733, 6),
    "zdays3": ["三", "五", "七"],
    "zbvacc": "百白破疫苗|麻腮风疫苗|乙脑疫苗|流脑疫苗",
    "zmonth": ["一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月", "十一月", "十二月"],
    "zage": ["四", "六", "八"],
    "zml": ["600", "700", "800", "900"],
    "zfeeds": ["四", "五", "六"],
    "zmin": ["500", "600"],
    "zsalary": ["7500", "8000", "9000"],
    "zfever": ["38.2", "38.6", "39"],
    "zsickdays": ["两", "三"],
    "zclass": "金宝贝|美吉姆|小小运动馆|东方爱婴",
    "zteacher": ["王", "李", "赵", "孙"],
    "zheight": ["68", "72", "76"],
    "zweight": ["8.1", "8.9", "9.6"],
    "zdiaper": "花王|帮宝适|好奇|大王",
    # filler
    "zwcity": "杭州|成都|北京|上海|广州|深圳|南京|武汉|重庆|西安|苏州|厦门|青岛|昆明|长沙",
    "zwday": ["今天", "明天", "后天", "周六", "周日", "这个周末", "明天早上", "今晚"],
    "zwtemp": _nums("%d", -2, 1, 38),
    "zwsky": ["晴", "多云", "小雨", "阵雨", "阴", "雷阵雨", "有雾", "大风"],
    "zwind": ["二", "三", "四", "五"],
    "zadvice": ["记得带伞。", "适合出门走走。", "注意防晒。", "早晚凉，多穿一件。", "别骑电动车了。", "适合晾衣服。"],
    "ztmin": _nums("%d", 3, 1, 40),
    "ztlabel": ["煮饺子", "蒸包子", "泡茶", "煮鸡蛋", "炖汤", "烤红薯", "洗衣服", "午睡", "面膜", "煮粥", "烤面包", "焖米饭"],
    "zclock": _nums("%d:05", 7, 1, 15) + _nums("%d:25", 7, 1, 15) + _nums("%d:45", 7, 1, 15),
    "zlroom": ["客厅", "卧室", "厨房", "书房", "阳台", "卫生间", "儿童房", "玄关"],
    "zpct": _nums("%d", 10, 5, 15),
    "zchore": ["交电费", "取快递", "给妈妈打电话", "收衣服", "倒垃圾", "买牛奶", "给花浇水", "还信用卡", "预约理发",
               "交物业费", "续费视频会员", "给车充电", "拿干洗的衣服"],
    "zgenre": ["轻音乐", "古典乐", "粤语老歌", "民谣", "爵士", "儿歌", "评书", "相声", "钢琴曲", "流行歌"],
    "zidiom": ["画蛇添足#做了多余的事，反而不恰当", "守株待兔#死守经验不知变通，或者妄想不劳而获",
               "对牛弹琴#对不懂道理的人讲道理，白费口舌", "亡羊补牢#出了问题以后及时补救，还不算晚",
               "杯弓蛇影#因为疑神疑鬼而自己吓自己", "井底之蛙#见识短浅的人",
               "掩耳盗铃#自己骗自己", "半途而废#事情没做完就放弃了", "拔苗助长#违反规律急于求成，反而坏事",
               "塞翁失马#坏事也可能变成好事"],
    "zing": ["鸡蛋", "番茄", "土豆", "青椒", "豆腐", "五花肉", "白菜", "香菇", "虾仁", "黄瓜", "牛肉", "茄子"],
    "zquick": ["家常小炒", "汤", "炒饭", "盖浇饭", "凉拌菜", "炖菜"],
    "zcookmins": ["15", "20", "25", "30"],
    "zsteps": _nums("%d", 3208, 411, 20),
    "zwalk": _nums("%d", 15, 5, 10),
}

FRAMES = {
    "home": [
        ("z_wifi", """
*U: 家里访客WiFi叫{zwifi}，密码是{zpw}
A: 记住了，{friend}来的时候我可以告诉他。
""", """
c: 客人来了怎么连网？
c: 给朋友用的无线网络密码是多少？
r: {zwifi}的密码是什么？
"""),
        ("z_property", """
*U: 小区物业的电话是{zphone}，管家叫{zperson}
A: 好的，水管或者电梯出问题时可以找{zperson}。
""", """
c: 楼里东西坏了该打给谁？
c: 物业管家怎么联系？
r: {zperson}的电话多少？
"""),
        ("z_aircon", """
U: 把客厅空调调到{ztemp}度
C: home_control|device=客厅空调|action=set|value={ztemp}
*R: 客厅空调：制冷{ztemp}℃，风速{zfan}，{zmins}分钟后自动切换睡眠模式
A: 好了，客厅很快就凉快了，{partner}回来正好。
""", """
c: 空调多久以后进入睡眠模式？
c: 客厅冷气的风速设的是多少？
"""),
        ("z_gas", """
~U: 燃气费每月{zday}号自动扣款，从{zbank}的卡里扣
A: 好的，扣款前一天我提醒你，{partner}也不用操心了。
---
*U: 燃气费扣款改了，现在从{zbank2}的卡里扣，每月{zday2}号
A: 收到，以后按新的扣款日提醒你。{partner}知道吗？
""", """
c: 煤气费现在从哪张卡里扣？
c: 每个月几号交天然气费？
"""),
        ("z_locker", """
*U: 快递柜取件码是{zcode}，在{zplace}门口的{zlocker}柜
A: 记下了，下班路上记得去拿，{partner}顺路也可以。
""", """
c: 包裹放在哪个柜子里了？
c: 取快递的号码是多少？
"""),
        ("z_robot", """
U: 扫地机器人一直报错{zerr}，{partner}弄了半天也不行，怎么办？
*A: {zerr}一般是主刷被头发缠住了：把机器翻过来，取下主刷，用剪刀剪掉缠绕的头发，再把边刷和尘盒也清理一下，然后重启。
""", """
c: 吸尘机器人出错时你说要怎么弄？
c: 扫地机故障怎么处理来着？
r: 扫地机报{zerr}是什么意思？
"""),
        ("z_leak", """
*U: 卫生间漏水是{zperson}师傅修的，他说防水层{zyears}年后要重做，收了{zmoney}
A: 记好了，以后有问题还可以找{zperson}师傅。
""", """
c: 洗手间渗水是谁修好的？
c: 修漏水花了多少钱？
r: {zperson}师傅收了多少钱？
"""),
    ],
    "travel": [
        ("z_flight", """
U: 查一下明天的{zflight}航班
C: flight_status|flight={zflight}
*R: {zflight} {zcity}—{zcity2}：{zhhmm}起飞，{zterm}号航站楼，登机口{zgate}，准点
A: 航班正常，记得提前两个小时出门，{partner}送你吗？
""", """
c: 飞机在哪个登机口？
c: 明天的航班从几号航站楼走？
r: {zflight}在哪登机？
"""),
        ("z_hotel", """
~U: 我们在{zcity}住{zhotel}，{zdate}入住
A: 好的，到时候我帮你查去{zhotel}的路线。
---
*U: {zhotel}满房了，改住{zhotel2}，就在{zspot}旁边
A: 真麻烦，不过{zspot}附近挺方便的。
""", """
c: 这次出去玩最后住哪家酒店？
c: 旅游住的地方换成哪儿了？
r: {zhotel}满房以后换了哪家？
"""),
        ("z_visa", """
U: 去{zcountry}要签证吗？
*A: 中国护照去{zcountry}旅游需要提前办电子签证，停留不超过{zdays}天，建议出发前{zlead}个工作日在网上申请，费用大约{zfee}。
""", """
c: 出国入境许可要提前多久办？
c: 电子签要花多少钱？
r: 去{zcountry}需要办什么手续？
"""),
        ("z_train", """
*U: 去{zcity}的高铁是{ztrain}次，{zhhmm}从{zstation}出发，{zcar}车厢{zseat}座
A: 收到，开车前一个小时提醒你和{partner}。
""", """
c: 火车坐在几号车厢？
c: 我们坐的动车几点开？
r: {ztrain}几点发车？
"""),
        ("z_sight", """
U: {zsight}几点开门？门票多少钱？
C: web_search|query={zsight} 开放时间 门票
*R: {zsight}：{zopen}开放，每{zweekday}闭馆，成人票{zprice}元，学生半价
A: 建议提前在网上预约，{zsight}人很多。
""", """
c: 那个景点星期几不开？
c: 景区门票多少钱一张？
r: {zsight}的票价是多少？
"""),
        ("z_foodtip", """
*U: {colleague}说到了{zcf[0]}一定要去{zcf[2]}吃{zcf[1]}
A: 记下了，到时候提醒你，{colleague}很懂吃。
""", """
c: 同事推荐必吃的是什么？
c: 出门在外应该去哪家店吃饭？
r: {colleague}推荐了什么好吃的？
"""),
        ("z_rental", """
*U: 在{zcity}租了{zrental}的车，订单号{zref}，取车时间{zhhmm}
A: 好的，记得带驾照，{partner}要开的话也带上。
""", """
c: 租的车订单编号是多少？
c: 几点去拿租的车？
"""),
        ("z_two_hotels", """
*U: 周末第一个选择：{zhotel}，每晚{zprice}元含早餐，离海边十分钟
A: 不错，另一个呢？{partner}怎么看？
*U: 第二个是{zhotel2}，便宜一点，{zprice2}元不含早，在火车站旁边
A: 想休息选第一个，想坐车到处玩选第二个，和{partner}商量一下吧。
""", """
c: 周末出游在比较哪两家住处？
c: 那两个住宿选项分别是什么？
"""),
    ],
    "food": [
        ("z_sister_rest", """
*U: 我姐{sister}说{zstreet}的{zrest}是全城最好吃的
A: 听起来不错，下次和{partner}不知道吃什么就去试试？
""", """
c: 我姐推荐的那家饭馆叫什么？
c: 姐姐说哪里的馆子最好？
r: {sister}推荐了哪家店？
"""),
        ("z_mom_dish", """
*U: 妈妈做{zdish}的秘诀：先放{zsecret}，再小火炖{zhours}个小时
A: 这个值得记下来，以后{daughter}想学的时候我告诉她。
""", """
c: 我妈做菜的独门诀窍是什么？
c: 老妈那道菜要炖多久？
r: {mom}的{zdish}怎么做？
"""),
        ("z_allergy", """
*U: {friend}{zweekday}来家里吃饭，他对{zallergen}过敏，菜里千万别放
A: 明白，安排菜单的时候我会提醒你避开，{friend}吃得放心。
""", """
c: 来家里吃饭的朋友不能吃什么？
c: 请客那天哪样食材要避开？
r: {friend}对什么过敏？
"""),
        ("z_fish", """
U: 清蒸{zfish}要蒸几分钟？{partner}说上次蒸老了
*A: 一斤左右的{zfish}，大火水开后蒸{zmins2}分钟，关火再焖两分钟，倒掉盘里的腥水，铺葱丝淋热油和蒸鱼豉油。
""", """
c: 蒸鱼你说要多长时间？
c: 鱼蒸好以后盘子里的水怎么处理？
r: {zfish}蒸多久？
"""),
        ("z_booking", """
~U: 订了{zrest}{zweekday}晚上{zdinner}的包间，{zqty}个人
A: 好的，提前一个小时提醒你出发去{zrest}。
---
*U: {zrest}打电话说包间改到{zdinner2}了，还是同一天
A: 收到，提醒时间也跟着改，{partner}别迟到。
""", """
c: 我们订的饭现在几点？
c: 聚餐时间改成几点了？
r: {zrest}的包间是几点？
"""),
        ("z_diet", """
*U: {partner}这个月在做{zdiet}，晚饭不吃{zavoid}
A: 知道了，这个月做饭我会给{partner}推荐合适的菜。
""", """
c: 另一半最近在忌口什么？
c: 这个月家里谁在节食，不吃哪些？
r: {partner}在做什么饮食计划？
"""),
        ("z_recipe", """
U: 查一下{zdish2}的做法，要什么材料
C: recipe_search|query={zdish2}
*R: {zdish2}：{zingr}；用时约{zmins2}分钟
A: 材料不多，{partner}下班前就能做好。
""", """
c: 那道菜需要准备哪些东西？
c: 我查的那个菜谱要做多久？
"""),
    ],
    "health": [
        ("z_dentist", """
~U: 约了{zhospital}的{zdentist}医生看牙，{zweekday}{zhhmm}
A: 好的，前一天提醒你去见{zdentist}医生。
---
*U: {zdentist}医生那边打电话来，改到{zweekday2}{zhhmm2}了
A: 收到，{zdentist}医生的提醒我也改好了。
""", """
c: 看牙改到什么时候了？
c: 补牙的预约现在是哪天？
r: {zdentist}医生的预约是什么时候？
"""),
        ("z_med", """
*U: {doctor}给我开了{zmed}，每天早上一片，饭后吃，连吃{zweeks}周
A: 要不要我每天早上提醒你？
""", """
c: 那个药我要吃多久？
c: 医生开的药怎么吃？
r: {zmed}怎么服用？
"""),
        ("z_bp", """
U: 记一下血压，{zsys}/{zdia}，心率{zpulse}
C: health_log|metric=血压|value={zsys}/{zdia}|pulse={zpulse}
*R: 已记录{zsys}/{zdia} mmHg，心率{zpulse}；本月共{zreadings}次，平均{zavg}
A: 记好了，下次复诊可以给{doctor}看看。
""", """
c: 这个月平均血压多少？
c: 我这个月量了几回血压？
"""),
        ("z_sleep", """
U: 最近总是凌晨{zhour}点醒，然后就睡不着了
*A: 卧室温度保持在{ztemp2}度左右，睡前一小时别看手机；如果躺了二十分钟还睡不着，就起来看会儿无聊的书，困了再回床上。下午{zcut}点以后别喝咖啡和浓茶。
""", """
c: 你说喝咖啡和失眠有什么关系？
c: 卧室多少度比较好睡？
"""),
        ("z_checkup", """
*U: 体检报告出来了：血糖{zglu}，总胆固醇{zchol}，医生说要少吃{zless}
A: 数字偏高一点，我们一起调整饮食吧。
""", """
c: 体检结果怎么样？
c: 医生让我少吃什么？
"""),
        ("z_gym", """
*U: 报了{zgym}的{zsport}课，每{zweekday}{zhhmm}，教练叫{zperson}
A: 太好了，上课前一个小时提醒你。
""", """
c: 我的健身课是星期几？
c: 健身房的教练叫什么？
r: {zsport}课的教练是谁？
"""),
        ("z_vaccine", """
*U: 今天在{zclinic}打了{zvaccine}第一针，第二针{zmonths}个月后打
A: 辛苦了，到时候提醒你打第二针。
""", """
c: 下一针什么时候打？
c: 我是在哪里打的疫苗？
"""),
    ],
    "work": [
        ("z_launch", """
~U: {zproject}项目定在{zdate}上线
A: 好的，{zproject}的日期记下了。
---
*U: {boss}说{zproject}推迟到{zdate2}上线，支付接口还没准备好
A: 至少{zproject}团队能喘口气了。
""", """
c: 项目现在什么时候上线？
c: 为什么发布推迟了？
r: {zproject}的新上线日期？
"""),
        ("z_meeting", """
*U: 每周和{colleague}的例会在{zroom}会议室，{zweekday}{zhhmm}
A: 好的，开会前十分钟提醒你。
""", """
c: 和同事的固定会议在哪开？
c: 每周碰头会几点？
"""),
        ("z_travel_policy", """
U: 去{zcity}出差的住宿标准是多少？
C: company_docs|query=差旅标准 {zcity}
*R: 差旅标准（{zcity}）：住宿每晚不超过{zcap}元，餐补每天{zmeal}元，返回后{zdays2}天内提交发票
A: 订酒店别超标，发票都留好。
""", """
c: 出差住酒店每晚能报多少？
c: 发票要在几天内交？
"""),
        ("z_review", """
*U: 年终述职在{zdate}，{boss}要求PPT不超过{zslides}页
A: 内容精简点更好，我可以帮你一起删减。
""", """
c: 汇报的幻灯片最多几页？
c: 年终总结是哪天？
"""),
        ("z_leave", """
*U: {zperson}休产假到{zdate}，期间{zperson2}负责{zarea}的客户
A: 好的，{zarea}的问题我会提醒你找对人。
""", """
c: 同事休假期间谁接手客户？
c: 休产假的同事什么时候回来？
r: 谁替{zperson}负责客户？
"""),
        ("z_decline", """
U: 帮我委婉地拒绝{zvendor}的合作邀请，对接人是{zperson}
*A: 草稿如下：“{zperson}您好，感谢贵司详细的方案。经过慎重考虑，我们本季度暂不推进这项合作，预算已另有安排。期待今后有机会再合作。”
""", """
c: 给供应商的拒绝邮件是怎么写的？
c: 回绝合作的措辞是什么？
"""),
        ("z_ticket", """
*U: 笔记本键盘坏了，IT工单号{zticket}，说要{zdays3}个工作日
A: 太耽误事了，要是拖太久我帮你写个催办邮件给{boss}。
""", """
c: 报修单号是多少？
c: 电脑修好要几天？
"""),
    ],
    "baby": [
        ("z_bvacc", """
*U: {son}今天打了{zbvacc}，下一针是{zmonth}
A: 宝宝真棒，到时候提醒你。
""", """
c: 宝宝下一针疫苗什么时候？
c: 孩子今天打的是什么针？
r: {son}下次打针是哪个月？
"""),
        ("z_milk", """
U: {son}{zage}个月了，一天喝多少奶合适？
*A: {zage}个月的宝宝一天大约喝{zml}毫升，分成{zfeeds}顿；如果开始加辅食，奶量可以稍微减一点，但不要少于{zmin}毫升。
""", """
c: 宝宝一天应该吃多少奶？
c: 一天分几顿喂？
"""),
        ("z_nanny", """
*U: 育儿嫂{zperson}每月工资{zsalary}元，电话{zphone}
A: 记好了，有事可以直接联系{zperson}。
""", """
c: 阿姨一个月多少钱？
c: 怎么联系带孩子的阿姨？
r: {zperson}的电话多少？
"""),
        ("z_fever", """
U: {son}发烧{zfever}度，怎么办？
*A: 多喂水，穿薄一点，可以按体重用儿童退烧药；如果{zsickdays}天不退、超过39.5度、精神很差或者不肯喝水，要马上去医院。
""", """
c: 孩子发烧你说什么情况要去医院？
c: 宝宝体温高的时候该怎么处理？
"""),
        ("z_class", """
*U: 给{son}报了{zclass}早教班，每{zweekday}上午{zhhmm}，老师姓{zteacher}
A: 真不错，上课前提醒你带好水杯和尿布。
""", """
c: 早教课是星期几？
c: 早教班的老师姓什么？
"""),
        ("z_growth", """
*U: {son}体检：身高{zheight}厘米，体重{zweight}公斤，医生说发育正常
A: 长得真好，下次体检我再帮你对比。
""", """
c: 孩子现在多高多重？
c: 宝宝体检量的身高是多少？
"""),
        ("z_diaper", """
*U: {son}只能用{zdiaper}的纸尿裤，别的牌子会红屁股
A: 知道了，买的时候提醒你认准这个牌子。
""", """
c: 宝宝用哪个牌子的尿不湿？
c: 为什么不能换别的纸尿裤？
"""),
    ],
}

FILLER = {
    "any": [
        """U: {zwcity}{zwday}天气怎么样？
           C: get_weather|city={zwcity}|date={zwday}
           R: {zwcity}{zwday}：{zwtemp}℃，{zwsky}，{zwind}级风
           A: {zwcity}{zwday}{zwtemp}度，{zwsky}。{zadvice}""",
        """U: 定个{ztmin}分钟的计时器，{ztlabel}
           C: set_timer|minutes={ztmin}|label={ztlabel}
           R: 计时器“{ztlabel}”：{ztmin}分钟，{zclock}响
           A: 好的，{zclock}提醒你{ztlabel}。""",
        """U: 把{zlroom}的灯调到百分之{zpct}
           C: home_control|device={zlroom}灯|action=dim|value={zpct}
           R: {zlroom}灯亮度{zpct}%（{zclock}）
           A: 好了，{zlroom}的灯现在是{zpct}%。""",
        """U: {zclock}提醒我{zchore}
           C: reminder_add|text={zchore}|at={zclock}
           R: 已设置提醒：{zclock} {zchore}
           A: 没问题，{zclock}提醒你{zchore}。""",
        """U: 在{zlroom}放点{zgenre}
           C: media_play|room={zlroom}|query={zgenre}
           R: {zlroom}音箱正在播放：{zgenre}精选（{zclock}）
           A: 好的，{zlroom}开始放{zgenre}了。""",
        """U: {son}问我“{zidiom[0]}”是什么意思，{zwday}要考
           A: “{zidiom[0]}”的意思是{zidiom[1]}。可以给{son}讲个小故事帮他记住。""",
    ],
    "home": [
        """U: 洗衣机洗完了吗？
           C: home_control|device=洗衣机|action=status
           R: 洗衣机：剩余{ztmin}分钟，{zwtemp}℃棉麻程序
           A: 还没有，还要{ztmin}分钟。""",
    ],
    "food": [
        """U: 用{zing}、{zing2}和{zing3}能做什么菜？
           A: 可以做个{zquick}，{zing}、{zing2}、{zing3}都用上，大概{zcookmins}分钟。""",
    ],
    "travel": [
        """U: 出门清单记一下：{zing}味零食、充电宝、{zwind}双袜子，去{zwcity}
           A: 记好了，去{zwcity}带上{zing}味零食、充电宝和{zwind}双袜子。""",
    ],
    "health": [
        """U: 今天走了多少步？
           C: health_log|metric=steps|action=read
           R: 今日步数：{zsteps}；最近一次散步{zwalk}分钟，{zclock}
           A: 今天{zsteps}步了，{zclock}那次散步走了{zwalk}分钟。""",
    ],
    "work": [
        """U: {zclock}以后还有几个会？
           C: calendar_list|date=今天|after={zclock}
           R: {zclock}以后共{zwind}个日程，下一个：与{zperson}对齐需求
           A: {zclock}之后还有{zwind}个会，下一个是和{zperson}对需求。""",
    ],
    "baby": [
        """U: 记一下{son}{zclock}喝了{zml}毫升奶
           C: baby_log|event=喂奶|ml={zml}|at={zclock}
           R: 已记录：{zclock}喂奶{zml}毫升，今天第{zfeeds}次
           A: 记好了，{son}今天第{zfeeds}次喝奶。""",
    ],
}
