"""The English half of the history-search set (history_set.py says how it is used): the
chats with their people, the value pools, and the filler turns; the fact frames are in
history_en_frames.py.

A frame or filler body is one line per record: `U:` user, `A:` final answer, `C:` a tool
call (`name|key=value|...`), `R:` its result; `*` marks a gold record, `~` a record a later
line corrects, `---` starts the part told some turns later. `{slot}` is a person of the
chat or a value drawn from a pool (`{slot2}`: another value of the same pool;
`{slot[1]}`: the second field of a pool value written `a#b`)."""

from .history_en_frames import FRAMES  # noqa: F401 (the set's frames, by topic)


def _people(sister, brother, mom, dad, partner, friend, colleague, boss, neighbour, son, daughter, dog, cat,
            town, doctor, car):
    return {"sister": sister, "brother": brother, "mom": mom, "dad": dad, "partner": partner, "friend": friend,
            "colleague": colleague, "boss": boss, "neighbour": neighbour, "son": son, "daughter": daughter,
            "dog": dog, "cat": cat, "town": town, "doctor": doctor, "car": car}


def _s(alias, topic, filler):
    return {"alias": alias, "topic": topic, "filler": filler}


CHATS = [
    {"chat": ("telegram", "5512093"),  # Maya, on her phone
     "persona": _people("Lena", "Marco", "Ingrid", "Piet", "Tom", "Ayesha", "Priya", "Gretchen", "Mrs. Okafor",
                        "Finn", "Ella", "Biscuit", "Miso", "Utrecht", "Dr. Visser", "Toyota Yaris"),
     "sessions": [_s("default_01", "home", 50), _s("cooking", "cooking", 55), _s("travel", "travel", 20),
                  _s("health", "health", 45), _s("garden", "garden", 10), _s("family", "family", 35)]},
    {"chat": ("feishu", "ou_d41c7a"),  # Daniel, mostly work
     "persona": _people("Rosa", "Kwame", "Helen", "Arthur", "Jun", "Tariq", "Wen", "Marguerite", "Mr. Haddad",
                        "Leo", "Zoe", "Pepper", "Tofu", "Leeds", "Dr. Brennan", "Skoda Octavia"),
     "sessions": [_s("default_01", "work", 60), _s("travel", "travel", 45), _s("finance", "finance", 6),
                  _s("fitness", "health", 18), _s("car", "car", 28)]},
    {"chat": ("web", "kitchen-panel"),  # the family's shared kitchen display
     "persona": _people("Greta", "Olu", "Margaret", "Ray", "Chris", "Deepa", "Hannah", "Mr. Lindqvist", "Bev",
                        "Oscar", "Ruby", "Rocco", "Pixel", "Bristol", "Dr. Shah", "Volvo XC40"),
     "sessions": [_s("default_01", "home", 40), _s("shopping", "shopping", 22), _s("cooking", "cooking", 50),
                  _s("kids", "family", 12), _s("pets", "pets", 30)]},
    {"chat": ("uart", "console"),  # the owner, at the serial console
     "persona": _people("Nadia", "Felix", "Sabine", "Josef", "Alex", "Kenji", "Ravi", "Ursula", "Pavel",
                        "Milo", "Ivy", "Ziggy", "Luna", "Tampere", "Dr. Laine", "Kia Niro"),
     "sessions": [_s("default_01", "electronics", 36), _s("flat", "home", 14), _s("books", "books", 5),
                  _s("car", "car", 40)]},
    {"chat": ("telegram", "7730211"),  # Sofia
     "persona": _people("Carmen", "Diego", "Lucia", "Ramon", "Ethan", "Chloe", "Aaron", "Beatrix", "Mr. Novak",
                        "Mateo", "Alba", "Olive", "Sushi", "Valencia", "Dr. Ferrer", "Renault Zoe"),
     "sessions": [_s("default_01", "work", 24), _s("family", "family", 50), _s("moving", "home", 26),
                  _s("cooking", "cooking", 10), _s("health", "health", 55), _s("pets", "pets", 6)]},
]


def _nums(fmt, start, step, n):
    return [fmt % (start + i * step) for i in range(n)]


# Pools whose values are drawn once in the whole set (every fact told once).
UNIQUE = (
    "wifi", "pw", "housenum", "alarm", "person", "company", "phone", "code", "err", "energyco", "scene", "robot",
    "restaurant", "street", "starter", "bake", "dish", "mains", "pan", "flight", "hotel", "city", "country",
    "rental", "ref", "museum", "insurer", "policy", "food", "landmark", "dentist", "med", "vaccine", "clinic",
    "sport", "gym", "optician", "gift", "venue", "lake", "job", "project", "mroom", "ticket", "vendor", "conf",
    "garage", "charger", "chip", "vetclinic", "book", "author", "money", "date", "employer", "order",
    "product", "store", "brand", "secret", "race", "wedgift", "streaming", "etf", "cityfood",
)

POOLS = {
    "wifi": "Heron-5G|PixieNet|Attic_Guest|Lighthouse-2.4|Nebula-Guest|TomatoHouse|Sparrow-Guest|Otter-Net",
    "pw": "blue-kettle-42|Marigold!1987|tram6-window|sunny/porch/77|Quokka-jam-31|fig&walnut-09|lanternfish55|"
          "pebble-road-18",
    "housenum": _nums("%d", 11, 6, 20),
    "alarm": "Kidde 10Y29|FireAngel ST-622|Nest Protect|Ei650|X-Sense XS01|Aico Ei3016",
    "battery": ["9V lithium", "CR123A", "AA alkaline", "sealed lithium"],
    "years": ["three", "five", "seven", "ten"],
    "person": "Derek Mills|Ana Costa|Jonas Berg|Fatima Zahra|Graham Doyle|Ines Moreau|Luca Bianchi|Mina Park|"
              "Olav Haugen|Paula Reyes|Quentin Roy|Rhea Kapoor|Stefan Novak|Tess Walsh|Umar Siddiqui|"
              "Vera Lindahl|Wes Carter|Yusuf Demir|Zara Hughes|Bram de Jong|Cleo Martin|Dario Ricci|"
              "Elif Yilmaz|Gus Fraser|Hana Sato|Ivo Petrov|Jade Thompson|Kofi Mensah|Lotte Jansen|Marta Silva|"
              "Niall Byrne|Odile Faure|Piotr Zielinski|Rafa Ortega|Saoirse Kelly|Tomas Horak|Agnes Varga|"
              "Boris Klein|Celia Duarte|Dmitri Orlov|Esme Clarke|Filip Novotny|Greer Campbell|Hugo Laurent|"
              "Ilse Vos|Joaquin Serra|Keira Walsh|Lars Eriksen",
    "company": "DripFix Plumbing|Bakker & Sons|QuickFlow Services|PipeRight|Aqua Masters|Leak Busters|"
               "TopSlate Roofing|Jansen Dak & Goot|Summit Roofers|Greenleaf Builders|Hartley & Co|Roofline Repairs",
    "phone": _nums("0612 %06d", 304117, 7919, 40),
    "money": _nums("%d euros", 65, 35, 60),
    "code": _nums("%04d", 1397, 367, 24),
    "err": "E21|F05|OE|E18|4C|F21|E20|5E",
    "brand": "Bosch|Miele|Samsung|LG|AEG|Beko|Siemens|Whirlpool",
    "energyco": "Vattenfall|Eneco|Octopus Energy|Greenchoice|Essent|Budget Energie",
    "cents": _nums("%d", 21, 3, 12),
    "temp": ["19", "20", "20.5", "21", "21.5", "22"],
    "eco": ["15", "16", "16.5", "17"],
    "hhmm": _nums("%d:15", 8, 1, 12) + _nums("%d:40", 8, 1, 12) + _nums("%d:05", 8, 1, 12),
    "morning": ["5:30", "5:45", "6:00", "6:15", "6:30", "6:45", "7:00"],
    "dinner": ["18:00", "18:30", "19:00", "19:15", "19:30", "20:00", "20:30", "21:00"],
    "night": ["21:30", "22:00", "22:30", "23:00", "23:30"],
    "scene": "Cinema Mode|Popcorn|Dark Room|Film Night|Matinee|Big Screen",
    "pct": _nums("%d", 10, 5, 12),
    "colour": "deep blue|warm amber|soft purple|dim red|teal|orange",
    "weekday": "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday",
    "robot": "Dusty|Roomba Rex|Sir Sweeps|Hoovie|Crumb Crusher|Bobby",
    "restaurant": "Osteria Dodo|Trattoria Lume|Casa Nonna|Il Fornello|La Pergola|Bistro Margaux|The Olive Tree|"
                  "Pasta Pazza|Da Vinci's Kitchen|Harbour Grill|Mama Rosa|Taverna Kyma|Cafe Tula|Luigi's|"
                  "Sapori Antichi|The Copper Pot|Fig & Vine|Ristorante Sole",
    "street": "Via Roma|Oudegracht|Mill Lane|Kings Road|Canal Street|Rue Verte|Baker Street|Harbour Road|"
              "Station Square|Bridge Street",
    "starter": "Clint Yeastwood|Bready Mercury|Doughtzilla|Sir Loafalot|Bubbles|Yeasty Boy",
    "grams": ["20", "30", "40", "50"],
    "hours": ["2", "3", "4", "5", "6"],
    "bake": "banana bread|scones|pancakes|soda bread|blueberry muffins|fried chicken marinade|waffles|"
            "chocolate cake|cornbread|carrot cake|apple crumble|lemon drizzle cake|brownies",
    "tbsp": ["a tablespoon", "one and a half tablespoons", "two teaspoons", "a generous tablespoon"],
    "dish": "beef ragu|goulash|chicken cacciatore|bean stew|lamb tagine|meatballs in tomato sauce|"
            "pork and cabbage stew|lentil soup",
    "secret": "anchovy paste|cocoa powder|fish sauce|a splash of espresso|miso|smoked paprika|orange zest|"
              "a bay leaf and cloves",
    "mains": "roast lamb|mushroom risotto|grilled salmon|beef wellington|duck breast|seafood paella|"
             "pork belly|truffle pasta",
    "wine": "Rioja Crianza|Pinot Noir from Burgundy|dry Riesling|Chianti Classico|white Rioja|Barbera d'Asti|"
            "Gruener Veltliner",
    "fahr": ["325", "350", "375", "400", "425", "450"],
    "cels": ["160", "175", "190", "200", "220", "230"],
    "diet": "a no-sugar challenge|Whole30|a vegan month|a low-carb month|a dairy-free trial|a gluten-free trial",
    "avoid": ["sugar or honey", "dairy", "meat or eggs", "pasta or bread", "cheese or cream", "wheat"],
    "pan": "grandmother's cast-iron skillet|Lodge skillet|carbon-steel wok|Dutch oven lid|old frying pan",
    "oil": ["flaxseed oil", "vegetable shortening", "sunflower oil", "rapeseed oil"],
    "hyd": ["62", "65", "68", "70", "72"],
    "salt": ["20", "25", "28", "30"],
    "proof": ["24", "48", "72"],
    "flour": ["Tipo 00", "Caputo Pizzeria", "bread", "Manitoba"],
    "flight": "KL1365|TP1353|LH2301|BA2763|IB3172|AZ611|SK1432|OS372",
    "airport": "Amsterdam|Lisbon|Frankfurt|London Heathrow|Madrid|Rome|Copenhagen|Vienna|Manchester",
    "gate": _nums("D%d", 4, 3, 10) + _nums("B%d", 12, 5, 8),
    "terminal": ["1", "2", "3", "5"],
    "hotel": "Hotel Miramar|Casa do Rio|The Grand Pier|Albergo Bellavista|Hotel Aurora|Pension Edelweiss|"
             "Harbour View Inn|Hotel Santa Clara|The Linden House|Villa Serena",
    "city": "Lisbon|Naples|Porto|Seville|Valletta|Dubrovnik|Split|Bordeaux",
    "dom": _nums("%d", 3, 2, 12),
    "landmark": "the old cathedral|the fish market|the botanical garden|the castle walls|the main square|"
                "the river promenade|the opera house",
    "date": [d + " " + m + " 2025" for m in ("March", "May", "June", "September", "October", "November") for d in ("3", "9", "14", "18", "22", "27")],
    "country": "Japan|Morocco|Canada|Brazil|Australia|South Africa|India|Mexico|Kenya|Vietnam|Turkey|Egypt",
    "plug": "A|C|G|I",
    "volt": ["110", "220", "230", "240"],
    "rental": "Sixt|Europcar|Hertz|Avis|Enterprise|Budget",
    "ref": _nums("RC-%d", 48213, 911, 12),
    "museum": "Museu do Azulejo|Capodimonte museum|Rijksmuseum|Alcazar|Maritime Museum|Museum of Broken "
              "Relationships|Cite du Vin",
    "openhours": ["10:00-18:00", "9:30-17:30", "10:00-19:00", "9:00-17:00"],
    "insurer": "Allianz Travel|AXA Assistance|World Nomads|Europeesche|ANWB Reisverzekering|Aviva|Direct Line|"
               "Centraal Beheer|Admiral|Mapfre",
    "policy": _nums("TRV-%d", 700311, 4123, 10),
    "food": "grilled octopus|pastel de nata|fried anchovies|black rice|sea urchin pasta|cod fritters|"
            "clams in white wine",
    "cityfood": "Lisbon#grilled sardines|Naples#fried pizza|Porto#francesinha|Seville#salmorejo|Valletta#rabbit stew|"
                "Dubrovnik#black risotto|Split#peka|Bordeaux#canneles",
    "days": ["30", "60", "90"],
    "lead": ["3", "5", "7", "10"],
    "fee": ["30 dollars", "25 euros", "50 dollars", "40 euros"],
    "platform": _nums("%d", 2, 1, 14),
    "coach": _nums("%d", 3, 1, 9),
    "seat": _nums("%d", 41, 2, 30),
    "dentist": "Okafor|Jansen|Whitfield|Moreno|Lindgren|Castillo|Achterberg",
    "med": "amoxicillin|lisinopril|metformin|sertraline|omeprazole|prednisolone|atorvastatin|levothyroxine|"
           "amlodipine|cetirizine|vitamin D|magnesium citrate|melatonin",
    "mg": ["5", "10", "20", "40", "500"],
    "weeks": ["two", "three", "four", "six", "eight"],
    "sys": _nums("%d", 118, 3, 10),
    "dia": _nums("%d", 74, 2, 8),
    "pulse": _nums("%d", 58, 3, 10),
    "readings": _nums("%d", 6, 1, 10),
    "avg": _nums("%d/82", 121, 2, 6),
    "race": "half marathon|10K trail race|marathon|city 15K|charity 5K|Rotterdam half",
    "runs": ["three", "four"],
    "km": ["1", "1.5", "2"],
    "taper": ["7", "10", "14"],
    "allergen": "peanuts|sesame|shellfish|celery|mustard|kiwi|walnuts|soy|lupin|buckwheat|birch pollen|"
                "house dust mites|cat dander|grass pollen",
    "physio": "Joost|Mariana|Callum|Sanne|Henrik|Pilar",
    "ex": ["wall slides", "clamshells", "heel drops", "bird dogs", "glute bridges", "band pull-aparts",
           "calf raises", "dead bugs"],
    "joint": ["knee", "shoulder", "lower back", "ankle", "hip"],
    "sets": ["two", "three"],
    "vaccine": "tetanus|hepatitis A|tick-borne encephalitis|typhoid|shingles|yellow fever",
    "clinic": "the travel clinic on Lange Street|Greenway Health Centre|the pharmacy at the station|"
              "City Vaccination Point|St Anne's practice|the GGD office",
    "months": ["six", "twelve", "eighteen"],
    "hour": ["3", "3:30", "4", "4:30", "5"],
    "bedtemp": ["16", "17", "18"],
    "cutoff": ["noon", "1 pm", "2 pm", "3 pm"],
    "sport": "spin|reformer Pilates|kickboxing|yoga flow|bootcamp|aqua fit|climbing",
    "gym": "Basic-Fit|the YMCA|Fitland|the community centre|Pure Gym|Urban Athletics",
    "rx": ["-1.25", "-0.75", "-2.00", "+0.50", "-1.50", "-0.50"],
    "optician": "Specsavers|Eye Wish|Hans Anders|Pearle|Vision Express",
    "fever": ["38.2", "38.5", "38.9", "39.1"],
    "sickdays": ["two", "three"],
    "gift": "a silk scarf|a ceramics course|a Kindle|a cashmere cardigan|tickets to the opera|a bird feeder camera|"
            "a pasta machine|a spa voucher|a rose bush",
    "role": ["tree", "narrator", "dragon", "princess", "sheep"],
    "shoe": ["31", "33", "35", "36", "38"],
    "cloth": ["134", "140", "146", "152"],
    "rate": ["12 euros", "14 euros", "15 euros", "18 euros"],
    "venue": "Kasteel de Haar|a barn in the Cotswolds|the old town hall|a beach club in Cadiz|"
             "St Mary's church|the botanical garden",
    "holiday": ["Easter", "Christmas", "summer", "New Year"],
    "lake": "Lake Bled|the Veluwemeer|Loch Tay|Lake Vattern|Lake Garda|Lake Saimaa",
    "drive": ["two", "three", "four", "five"],
    "room": ["12", "14B", "21", "3A", "108"],
    "job": "a paramedic|a data analyst|head chef|a park ranger|an air traffic controller|a science teacher|"
           "a sound engineer",
    "employer": "the Red Cross|Spotify|Hotel Krasnapolsky|the national park service|Philips|Rabobank|"
                "the city council|Adyen|Decathlon",
    "wedgift": "a weekend in Ghent|a stand mixer|a hot-air balloon ride|a set of Le Creuset pans|"
               "a framed map of where they met",
    "project": "Atlas|Bluebird|Nimbus|Orchid|Kestrel|Juniper",
    "mroom": "Amstel|Rhine 2|the Fishbowl|Room 4.12|Everest|Boardroom B",
    "confcity": "Berlin|Barcelona|Vienna|Stockholm|Dublin|Prague",
    "perdiem": ["45", "52", "60", "64"],
    "cap": ["140", "160", "180", "210"],
    "ddays": ["14", "30", "60"],
    "ticket": _nums("INC%d", 204417, 3301, 8),
    "itdays": ["three", "five", "seven", "ten"],
    "slides": ["six", "eight", "ten", "twelve"],
    "area": ["Benelux", "Nordic", "retail", "healthcare", "public sector"],
    "vendor": "Brightline Consulting|DataForge|Nordwind Logistics|Pixelcraft Studio|Cloudnest|Optima HR",
    "raise": ["8", "10", "12", "15"],
    "conf": "PyCon|FOSDEM|Web Summit|DevOpsDays|KubeCon|MozFest",
    "hall": ["K.1.105", "Hall 3", "Room B", "the main stage", "Auditorium 2"],
    "timeout": ["30", "60", "120"],
    "psi": ["32", "33", "35", "36"],
    "psirear": ["30", "32", "34", "36"],
    "garage": "Kwik Fit|Autobedrijf de Vries|Halfords|ATU|the Skoda dealer|Euromaster|Speedy",
    "odo": _nums("%d", 45000, 15000, 8),
    "zone": ["P1", "P3", "P4", "P6"],
    "level": ["-1", "2", "3", "4"],
    "space": _nums("%d", 112, 37, 10),
    "charger": "Fastned|Ionity|Shell Recharge|Allego|Tesla Supercharger|Electra",
    "kw": ["50", "150", "300", "350"],
    "stalls": ["4", "6", "8", "12"],
    "dist": ["1.2", "2.5", "3.8", "4.4", "6"],
    "price": ["0.59 euros", "0.69 euros", "0.74 euros", "0.79 euros"],
    "roadside": ["ANWB", "the AA", "ADAC", "RAC"],
    "member": _nums("M%d", 55211, 977, 6),
    "dogvacc": ["rabies", "leptospirosis", "kennel cough", "parvovirus"],
    "month": "January|February|March|April|May|June|July|August|September|October|November|December",
    "catkg": ["4", "4.5", "5", "6"],
    "kcal": ["200", "230", "250", "280"],
    "chip": _nums("52810%010d", 4017, 991, 6),
    "chipreg": ["NDG", "Petlog", "Animal Tracker", "Europetnet"],
    "toxic": ["grapes", "raisins", "macadamia nuts", "chocolate truffles", "onion rings"],
    "vetclinic": "Dierenkliniek Noord|Pawsitive Vets|City Animal Hospital|Companion Care|Vet4Pets",
    "litter": ["pine pellet", "paper", "silica crystal", "wheat-based"],
    "gtemp": ["27.5", "29.1", "31.2", "33.0"],
    "hum": ["64", "71", "78", "83"],
    "soil": ["22", "31", "38", "45"],
    "tomato": "San Marzano|Black Krim|Sungold|Brandywine|Green Zebra|Moneymaker",
    "seedling": ["courgette", "pepper", "basil", "squash"],
    "mintemp": ["8", "10"],
    "plant": ["fuchsia", "tomatoes", "courgettes"],
    "remedy": ["a neem oil solution", "insecticidal soap", "diluted dish soap"],
    "seeds": ["runner bean", "calendula", "sweet pea", "borage"],
    "mins": ["10", "15", "20"],
    "rainmm": ["2", "3", "5"],
    "ratio": ["two parts", "three parts"],
    "mower": ["Honda HRX 476", "Bosch Rotak 37", "Husqvarna LC 247"],
    "shop": ["the hardware shop on Oak Street", "Gamma", "the garden centre"],
    "rent": ["1,450", "1,380", "1,520"],
    "groceries": ["600", "650", "700"],
    "savings": ["400", "500", "750"],
    "cardend": _nums("%04d", 4417, 1311, 4),
    "carddays": ["five", "seven", "ten"],
    "streaming": "Netflix|Disney+|HBO Max|Spotify Family|Videoland",
    "year": ["2025"],
    "etf": "Vanguard FTSE All-World|iShares Core MSCI World|Xtrackers S&P 500",
    "mortrate": ["3.4", "3.65", "3.9"],
    "fixyears": ["ten", "fifteen", "twenty"],
    "product": "standing desk|air fryer|espresso machine|robot lawnmower|kids' bike|bookshelf|blender|rug",
    "order": _nums("ORD-%d", 801233, 6121, 10),
    "loyal": _nums("%d", 60044172, 130973, 6),
    "courier": ["DHL", "PostNL", "DPD", "UPS", "GLS"],
    "window": ["9:00 and 13:00", "12:00 and 16:00", "16:00 and 21:00"],
    "store": "IKEA|Zalando|MediaMarkt|Coolblue|bol.com|Decathlon|John Lewis",
    "refunddays": ["five", "ten", "fourteen"],
    "appliance": ["fridge", "dishwasher", "dryer", "oven"],
    "applmodel": ["Bosch Serie 6", "Miele G 5210", "AEG 7000", "Siemens iQ500"],
    "gadget": ["coffee grinder", "robot vacuum", "smart doorbell", "blender"],
    "giftcode": _nums("GC-%d", 88213, 4441, 4),
    "kitchenthing": ["stand mixer", "pressure cooker", "bread machine", "espresso grinder"],
    "sale": ["Black Friday", "the January sales", "late August"],
    "sensor": ["DS18B20", "DHT22", "BME280", "rain gauge"],
    "gpio": ["4", "5", "15", "16", "17"],
    "pullup": ["4.7 kilo-ohm", "10 kilo-ohm"],
    "wire": ["50", "100", "150"],
    "printer": ["Prusa MK4", "Ender 3", "Bambu P1S"],
    "oledaddr": ["0x3C", "0x3D"],
    "envaddr": ["0x76", "0x77"],
    "envsensor": ["BME280", "SHT31"],
    "part": ["ESP32-S3 DevKitC boards", "INA219 current sensors", "SSD1306 displays", "18650 holders"],
    "partshop": ["Tinytronics", "Mouser", "AliExpress", "Pimoroni"],
    "volts": ["3.71", "3.86", "4.02"],
    "soc": ["41", "58", "77"],
    "runtime": ["19", "26", "38"],
    "mpver": ["1.23.0", "1.24.1", "1.25.0"],
    "board": ["ESP32-S3 DevKitC", "XIAO ESP32S3", "T-Display S3"],
    "bedc": ["70", "75", "80", "85"],
    "tip": ["knife", "bevel", "conical"],
    "irontemp": ["320", "340", "360"],
    "solder": ["63/37 leaded", "lead-free SAC305"],
    "book": "Piranesi|The Overstory|Klara and the Sun|A Gentleman in Moscow|Lessons in Chemistry|The Road|"
            "Tomorrow, and Tomorrow, and Tomorrow|Project Hail Mary|The Remains of the Day|Middlemarch|"
            "Stoner|The Secret History|Circe",
    "author": "Susanna Clarke|Richard Powers|Kazuo Ishiguro|Amor Towles|Bonnie Garmus|Cormac McCarthy|"
              "Gabrielle Zevin|Andy Weir|Madeline Miller",
    "narrator": ["Ray Porter", "Juliet Stevenson", "Stephen Fry"],
    "runhours": ["11", "16", "22"],
    "goal": ["24", "30", "40"],
    "done": ["9", "13", "17"],
    "bookshop": ["Waterstones on the high street", "the American Book Center", "Boekhandel Broese"],
    # filler
    "wcity": "Utrecht|Leeds|Bristol|Tampere|Valencia|Amsterdam|Paris|Berlin|Oslo|Madrid|Rome|Lisbon|Prague|"
             "Vienna|Zurich|Copenhagen|Dublin|Brussels|Munich|Milan|Porto|Seville|Krakow|Budapest|Athens",
    "wday": "today|tomorrow|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|this weekend|"
            "tomorrow morning|tonight",
    "wtemp": _nums("%d", -3, 1, 36),
    "wsky": "sunny|cloudy|light rain|showers|overcast|clear|foggy|windy and dry|thunderstorms|drizzle|"
            "sunny spells|snow flurries",
    "wadvice": "Take a jacket.|Good day to be outside.|Bring an umbrella.|Sunglasses weather.|Dress in layers.|"
               "Maybe skip the bike.|Perfect for a walk.|Hang the washing out early.",
    "wind": _nums("%d", 5, 5, 10),
    "tmin": _nums("%d", 2, 1, 44),
    "tlabel": "pasta|eggs|rice|tea|bread|laundry|roast|cookies|pizza|potatoes|broccoli|stew|parking meter|"
              "nap|homework break|face mask|sourdough|pie|soup|chicken|oats|dumplings",
    "clock": _nums("%d:07", 7, 1, 15) + _nums("%d:23", 7, 1, 15) + _nums("%d:48", 7, 1, 15) + _nums("%d:34", 7, 1, 15),
    "lroom": "kitchen|living room|hallway|bedroom|bathroom|study|garden|porch|kids' room|attic|garage|dining room",
    "chore": "water the plants|take out the bins|call the bank|move the laundry|check the oven|pick up the "
             "parcel|stretch|buy milk|charge the car|send the invoice|book the haircut|feed the fish|"
             "pay the parking fine|defrost the freezer|order contact lenses|reply to the school",
    "tzname": ["CET", "UTC+1", "UTC+2", "EST", "JST", "UTC"],
    "genre": "jazz|lo-fi beats|classical piano|80s pop|bossa nova|indie folk|reggae|film scores|blues|soul|"
             "ambient|salsa|baroque|swing",
    "playlist": "Sunday Morning|Deep Focus|Kitchen Dance Party|Coffee Table Jazz|Rainy Day|Golden Hour|"
                "Evening Chill|Throwback Hits|Dinner Party|Slow Mornings",
    "ing": "eggs|spinach|feta|chickpeas|rice|leftover chicken|tomatoes|courgette|mushrooms|potatoes|tuna|"
           "halloumi|lentils|peppers|tofu|noodles|bacon|sweet potato",
    "quickdish": "frittata|curry|stir-fry|traybake|salad bowl|soup|hash|wrap|pasta bake|fried rice",
    "cookmins": ["15", "20", "25", "30", "40"],
    "door": "front door|back door|garage door|side gate|shed",
    "steps": _nums("%d", 4210, 317, 30),
    "walkmin": _nums("%d", 15, 5, 12),
    "doc": "budget sheet|slide deck|contract draft|quarterly report|meeting notes|invoice|proposal|roadmap",
    "activity": "treasure hunt|paper-plane contest|kitchen science experiment|puppet show|Lego challenge|"
                "baking session|board game tournament|indoor picnic",
    "traffic": ["light", "heavy", "moving slowly", "normal for this time"],
    "delay": _nums("%d", 0, 4, 10),
    "route": ["A12", "A2", "ring road", "M32", "N30", "A27", "V-21"],
    "qty": _nums("%d", 2, 1, 12),
    "word": "petrichor#the smell of rain on dry earth|sonder#the feeling that every passer-by has a life as "
            "full as yours|hygge#a cosy, contented feeling of comfort and togetherness|apricity#the warmth "
            "of the sun in winter|sobremesa#the time spent talking at the table after a meal|"
            "vellichor#the wistfulness of used bookshops|fika#a Swedish coffee break with something sweet|"
            "komorebi#sunlight filtering through leaves|gezellig#Dutch for cosy and convivial|"
            "schadenfreude#pleasure at someone else's misfortune",
}

FILLER = {
    "any": [
        """U: What's the weather in {wcity} {wday}?
           C: get_weather|city={wcity}|date={wday}
           R: {wcity}, {wday}: {wtemp} °C, {wsky}, wind {wind} km/h
           A: {wcity} {wday}: {wtemp} degrees and {wsky}. {wadvice}""",
        """U: Set a timer for {tmin} minutes for the {tlabel}
           C: set_timer|minutes={tmin}|label={tlabel}
           R: Timer '{tlabel}' set for {tmin} min, rings at {clock}
           A: Timer running; I'll call you at {clock} for the {tlabel}.""",
        """U: Dim the {lroom} lights to {pct} percent
           C: home_control|device={lroom} lights|action=dim|value={pct}
           R: {lroom} lights dimmed to {pct}% at {clock}
           A: Done, {lroom} at {pct} percent.""",
        """U: Remind me to {chore} at {clock}
           C: reminder_add|text={chore}|at={clock}
           R: Reminder set for {clock}: {chore}
           A: Sure, at {clock} I'll remind you to {chore}.""",
        """U: What time is it in {wcity} right now?
           C: world_clock|city={wcity}
           R: {wcity}: {clock} ({tzname})
           A: It's {clock} in {wcity}.""",
        """U: Play some {genre} in the {lroom}
           C: media_play|room={lroom}|query={genre}
           R: Playing '{playlist}' ({genre}) on the {lroom} speaker
           A: Enjoy the {genre}; '{playlist}' is on in the {lroom}.""",
        """U: Anything on my calendar {wday} after {clock}?
           C: calendar_list|date={wday}|after={clock}
           R: {wday} after {clock}: no events
           A: Nothing after {clock} {wday}; {wsky} in {wcity} if you want to get out.""",
        """U: Turn off the {lroom} lights, and the {lroom2} too
           C: home_control|device={lroom} lights,{lroom2} lights|action=off
           R: {lroom} lights off; {lroom2} lights off ({clock})
           A: Both off: {lroom} and {lroom2}.""",
        """U: What does "{word[0]}" mean? Saw it in an article about {genre}
           A: "{word[0]}" means {word[1]}. Odd place for it in a piece on {genre}, but a lovely word.""",
        """U: Is the {door} locked?
           C: home_control|device={door}|action=status
           R: {door}: locked at {clock}, lock battery {pct}%
           A: Yes, the {door} has been locked since {clock}.""",
    ],
    "cooking": [
        """U: How many grams is {qty} cups of {ing}?
           A: Roughly, it depends on how you pack it; weigh {qty} cups of {ing} once and note it, then you never have to guess again.""",
        """U: Can I freeze {quickdish} with {ing} in it?
           A: Yes, a {quickdish} with {ing} freezes fine for about {qty} weeks; cool it quickly and thaw it overnight in the fridge.""",
        """U: What can I make with {ing}, {ing2} and {ing3}?
           A: How about a {quickdish} with {ing}, {ing2} and {ing3}? About {cookmins} minutes, one pan.""",
        """U: How long does {ing} keep in the fridge once it's open?
           A: Opened {ing} is best used within {qty} days; if it smells off, bin it. Keep it in a closed box at the back, where it's coldest.""",
        """U: Set a timer for the {tlabel} in the oven, {tmin} minutes, and another for {tmin2}
           C: set_timer|minutes={tmin}|label={tlabel}
           R: Timer '{tlabel}' set for {tmin} min; second timer {tmin2} min
           A: Two timers running: {tmin} and {tmin2} minutes for the {tlabel}.""",
    ],
    "home": [
        """U: Is the washing machine done?
           C: home_control|device=washing machine|action=status
           R: washing machine: {qty} min left, programme cotton {wtemp} °C
           A: Not yet, {qty} more minutes on the {wtemp}-degree wash.""",
        """U: Close the {lroom} blinds halfway
           C: home_control|device={lroom} blinds|action=position|value=50
           R: {lroom} blinds at 50% ({clock})
           A: The {lroom} blinds are half closed.""",
        """U: Set the {lroom} to {temp} degrees until {clock}
           C: home_control|device={lroom} thermostat|action=set|value={temp}C until {clock}
           R: {lroom} thermostat: {temp} °C until {clock}, then schedule
           A: The {lroom} will stay at {temp} degrees until {clock}.""",
        """U: Did anyone ring the doorbell while I was out around {clock}?
           C: doorbell_log|since={clock}
           R: Doorbell: {qty} rings since {clock}; last one a delivery driver ({courier})
           A: {qty} rings since {clock}; the last was a {courier} driver.""",
    ],
    "travel": [
        """U: Any {genre} concerts in {wcity} this summer?
           A: I can't search event listings offline, but {wcity} usually has {genre} in the parks in July; I'll look when we're online.""",
        """U: Pack list reminder for {wcity}: {ing} snacks, chargers, {qty} pairs of socks
           A: Noted for {wcity}: {ing} snacks, chargers and {qty} pairs of socks.""",
        """U: How long does the flight from {airport} to {airport2} take?
           A: About {qty} hours with a change, or a little under that direct; from {airport} most direct flights leave in the morning.""",
        """U: What's the weather going to be like in {wcity} next week for our trip?
           C: get_weather|city={wcity}|date=next week
           R: {wcity}, next week: {wtemp} °C highs, {wsky} most days
           A: Highs around {wtemp} in {wcity}, mostly {wsky}. Pack for that.""",
    ],
    "health": [
        """U: How many steps have I done today?
           C: health_log|metric=steps|action=read
           R: Steps today: {steps}; goal 8000; last walk {walkmin} min at {clock}
           A: {steps} so far; the {walkmin}-minute walk at {clock} helped.""",
        """U: Start a {walkmin}-minute stretching session
           C: set_timer|minutes={walkmin}|label=stretching
           R: Timer 'stretching' set for {walkmin} min, rings at {clock}
           A: Stretch away; I'll stop you at {clock}.""",
        """U: Log a {walkmin}-minute walk
           C: health_log|metric=walk|value={walkmin} min
           R: Logged {walkmin} min walk; {steps} steps today
           A: Nice, that's {steps} steps today.""",
        """U: Remind me to drink water every {qty} hours until {clock}
           C: reminder_add|text=drink water|every={qty}h|until={clock}
           R: Repeating reminder: drink water every {qty} h until {clock}
           A: Okay, a water nudge every {qty} hours until {clock}.""",
    ],
    "work": [
        """U: Summarise my day: how many meetings after {clock}?
           C: calendar_list|date=today|after={clock}
           R: {qty} events after {clock}; next: '{doc} review' with {person}
           A: {qty} meetings after {clock}, starting with the {doc} review with {person}.""",
        """U: Remind me to send {person} the {doc} at {clock}
           C: reminder_add|text=send {person} the {doc}|at={clock}
           R: Reminder set for {clock}: send {person} the {doc}
           A: At {clock} I'll remind you about the {doc} for {person}.""",
        """U: Draft a short reply to {person}: I'll send the {doc} by {weekday}
           A: Here you go: "Hi {person}, thanks for your patience; I'll have the {doc} over to you by {weekday}. Best regards" """,
        """U: Block my calendar from {clock} for {qty} hours for the {doc}
           C: calendar_add|title=Focus: {doc}|start={clock}|hours={qty}
           R: Busy from {clock} for {qty} h: 'Focus: {doc}'
           A: Blocked {qty} hours from {clock} for the {doc}.""",
    ],
    "family": [
        """U: Tell me a short bedtime story about a {genre}-loving {ing} for {daughter}
           A: Once upon a time a little {ing} who loved {genre} danced across the kitchen every night, until {daughter} joined in and they fell asleep by the window. The end.""",
        """U: Ideas for a rainy {weekday} afternoon with {son}?
           A: A {activity}, then a film with popcorn; {son} can choose the film if the {activity} goes well.""",
        """U: Remind me to call {mom} on {weekday} at {clock}
           C: reminder_add|text=call {mom}|at={weekday} {clock}
           R: Reminder set: call {mom}, {weekday} {clock}
           A: I'll remind you to call {mom} on {weekday} at {clock}.""",
    ],
    "pets": [
        """U: Did {cat} eat this morning?
           C: pet_feeder|pet={cat}|action=log
           R: feeder: {qty}0 g dispensed at {clock}, bowl empty at {clock2}
           A: Yes, {cat} ate: {qty}0 g at {clock}, all gone by {clock2}.""",
        """U: Log that {dog} had a {walkmin}-minute walk
           C: pet_log|pet={dog}|event=walk|minutes={walkmin}
           R: {dog}: walk {walkmin} min logged at {clock}
           A: Logged {dog}'s {walkmin}-minute walk.""",
    ],
    "car": [
        """U: How much charge is left in the car?
           C: car_status|field=battery
           R: battery {pct}%, range {walkmin}0 km, parked since {clock}
           A: {pct} percent, about {walkmin}0 kilometres of range.""",
        """U: How's the traffic on the {route} to {wcity}?
           C: traffic|route={route}|to={wcity}
           R: {route} towards {wcity}: {traffic}, {delay} min delay
           A: The {route} is {traffic} right now, about {delay} minutes of delay.""",
    ],
    "electronics": [
        """U: Ping the {lroom} sensor node
           C: device_ping|node={lroom}-node
           R: {lroom}-node: reply in {qty} ms, uptime {walkmin} h, RSSI -{wind} dBm
           A: The {lroom} node answers in {qty} ms, up {walkmin} hours.""",
        """U: Log the workbench temperature
           C: sensor_read|sensor=workbench
           R: workbench: {wtemp} °C at {clock}, humidity {hum}%
           A: {wtemp} degrees at the bench at {clock}, humidity {hum} percent.""",
    ],
}
