"""The English fact frames of the history-search set, by topic: (key, body, questions).
history_en.py describes a body's lines; a question line is `c:` (asked in the chat's scope,
or the session's) or `r:` (asked over the whole root: it names something of this chat only)."""

HOME = [
    ("roof_quotes", """
*U: First quote for fixing the roof: {company} wants {money} and can start right away
A: Good to have a first number. Are you getting a second opinion, maybe via {neighbour}?
*U: Second roofer, {company2}, quoted {money2} but can only start in {month}
A: So it's price against waiting. {partner} might have an opinion on the timing.
""", """
c: what did the two roofers quote?
c: how much were the offers for the roof repair?
"""),
    ("wifi_guest", """
*U: The guest wifi is called {wifi} and the password is {pw}
A: Got it. I'll only read it out when you ask, handy for when {friend} comes over.
""", """
c: how do visitors get online at our place?
c: what's the key for the network we give to guests?
r: what's the password of {wifi}?
"""),
    ("spare_key", """
*U: If I ever lock myself out, {neighbour} at number {housenum} has our spare key
A: Good to know. Shall I keep {neighbour}'s number handy in case you're stuck outside at night?
""", """
c: who keeps a copy of our house key?
c: I'm locked out, who can let me in?
r: who holds the spare key at number {housenum}?
"""),
    ("smoke_alarm", """
U: What battery does the {alarm} smoke detector in the hallway take?
*A: The {alarm} runs on a single {battery} cell. It chirps about once a minute when the cell is low, and a fresh one lasts around {years} years.
""", """
c: which cell does the fire alarm need?
c: how long will a new battery in the hallway alarm last?
r: what kind of battery goes in the {alarm}?
"""),
    ("thermostat", """
U: Set the heating to {temp} degrees on weekday mornings from {morning}
C: home_control|device=thermostat|action=schedule|value={temp}C weekdays from {morning}
*R: Thermostat schedule saved: {temp} °C Mon-Fri from {morning}, setback {eco} °C from {night} overnight
A: Done, {partner} should find the house warm before work.
""", """
c: what does the heating drop to at night?
c: when does the thermostat go down in the evening?
"""),
    ("plumber", """
*U: The plumber who fixed the leak under the sink was {person} from {company}, {phone}, and he charged {money}
A: Saved. I'll remind you to check under the sink again on {weekday}.
""", """
c: who repaired the dripping pipe in the kitchen?
c: how much did the leak repair cost us?
r: what's the number of {person}?
"""),
    ("garage_code", """
~U: The keypad code for the garage is {code}
A: Noted, {partner} can ask me for it too.
---
*U: I changed the garage keypad, it's {code2} from now on, the old one leaked to {son}'s friends
A: Updated; I'll only give out the new one, even to {son}.
""", """
c: what number opens the garage door?
c: what's the current combination for the garage?
"""),
    ("washer_error", """
U: The {brand} washing machine shows {err} and won't drain
*A: On {brand} machines {err} usually means the drain pump filter is blocked. Put a towel down, open the small flap at the bottom front, unscrew the filter slowly and clear out lint, hair or coins.
""", """
c: how did you tell me to fix the washer when the water wouldn't pump out?
c: where's the filter I need to clean on the laundry machine?
r: what does error {err} on a {brand} mean?
"""),
    ("power_tariff", """
~U: Our electricity plan with {energyco} is {cents} cents per kWh, fixed for a year
A: Thanks, I'll use the {energyco} rate when you ask what appliances cost to run.
---
*U: {energyco} wrote: from the first of next month we pay {cents2} cents per kWh, so much for fixed
A: Annoying! From now on I'll count with what {energyco} charges now.
""", """
c: what are we paying per unit of electricity now?
c: how much does power cost us at the moment?
r: what's {energyco}'s current price per kilowatt hour?
"""),
    ("movie_scene", """
U: Make a lights scene called {scene} for movie nights
C: home_control|device=living room lights|action=create_scene|value={scene}
*R: Scene '{scene}' created: ceiling lights off, floor lamp at {pct}%, TV backlight strip {colour}
A: Done. Just say "{scene}" when the film starts.
""", """
c: what colour does the TV strip go in the film-night setting?
c: how bright is the floor lamp during a movie?
r: what does {scene} do to the floor lamp?
"""),
    ("bins", """
*U: In {town} the recycling gets collected on {weekday} mornings and garden waste every other {weekday2}
A: I can remind you the evening before, say at {night}?
""", """
c: which day is the recycling picked up?
c: when do I put the green bin out?
r: when is garden waste collected in {town}?
"""),
    ("robot_vacuum", """
*U: The robot vacuum is called {robot}, it should only run on {weekday} and {weekday2} at {hhmm} when we're out
A: Okay, I'll keep {robot} quiet at other times.
""", """
c: on which days does the cleaning robot do its rounds?
c: when is the hoover bot scheduled?
r: what schedule did I give {robot}?
"""),
]

COOKING = [
    ("potluck", """
*U: For Saturday's potluck {friend} is bringing {dish} and I'll do a {bake}
A: A good start! Who else is coming, {partner}?
*U: {sister} just said she'll make {food} for it too
A: That's a proper feast: stew, bake and {food}.
""", """
c: who's bringing what to the potluck?
c: what dishes are planned for the shared dinner on the weekend?
"""),
    ("rest_sister", """
*U: My sister {sister} swears {restaurant} on {street} does the best carbonara in town
A: Sounds promising! Want me to suggest it next time you and {partner} can't decide where to eat?
""", """
c: what was that restaurant my sister recommended?
c: where did my sister say we should go for pasta?
r: which place did {sister} rave about?
"""),
    ("sourdough", """
U: How often do I need to feed my sourdough starter {starter} if I keep it in the fridge?
*A: Once a week is plenty in the fridge: throw away all but {grams} g, add the same weight each of flour and water, and leave it on the counter for {hours} hours before it goes back.
""", """
c: how often does my bread culture need topping up?
c: what's the weekly routine for the starter in the fridge?
r: how do I look after {starter}?
"""),
    ("dinner_allergy", """
*U: {friend} is coming for dinner on {weekday} and they're allergic to {allergen}, so keep that out of everything
A: Understood, I'll flag any recipe with it while we plan the menu for {friend}.
""", """
c: what can't our dinner guest eat?
c: which food makes my friend ill?
r: what must I leave out when cooking for {friend}?
"""),
    ("buttermilk", """
U: I'm out of buttermilk for the {bake}, what can I use instead?
*A: Stir {tbsp} of lemon juice or white vinegar into a cup of milk and wait ten minutes; it thickens and sours just enough to stand in for it in the {bake}.
""", """
c: what was the trick when I ran out of that sour milk ingredient?
c: how do I make a substitute for buttermilk again?
r: what did you suggest for the {bake} when I had none?
"""),
    ("grandma_sauce", """
*U: Grandma's secret for her {dish}: {secret} in the sauce and {hours} hours of slow simmering
A: That's a lovely thing to keep. Shall I save it as a recipe note for when {daughter} wants to learn it?
""", """
c: what was granny's hidden ingredient?
c: how long does my grandmother's sauce cook?
r: what's the secret in grandma's {dish}?
"""),
    ("wine", """
U: What wine should I open with the {mains} for {partner}'s birthday?
*A: A {wine} would suit the {mains} well: enough acidity to cut through the richness without drowning it. Open it half an hour before you eat.
""", """
c: which bottle did you suggest for my partner's birthday dinner?
c: what should we drink with the birthday meal?
r: what goes with {mains} according to you?
"""),
    ("oven_convert", """
U: The American {bake} recipe {friend} sent says {fahr} Fahrenheit, what's that for our oven?
C: convert|value={fahr}|from=F|to=C
*R: {fahr} degrees Fahrenheit = {cels} degrees Celsius; fan-assisted: {cels2} degrees Celsius
A: There you go. Round to the nearest mark on the dial for the {bake}.
""", """
c: what Celsius setting did the recipe from my friend need?
c: how hot should the oven be for the American bake?
r: what's {fahr} F in our units?
"""),
    ("table_booking", """
~U: Booked a table at {restaurant} for {weekday} at {dinner}, {qty} of us
A: Lovely, I'll remind you an hour before you head to {restaurant}.
---
*U: {restaurant} called, they had to move our table to {dinner2}, same day
A: Got it, the reminder moves with it so {partner} isn't late.
""", """
c: what time is our dinner reservation now?
c: when do we have to be at the restaurant?
r: when is the table at {restaurant}?
"""),
    ("partner_diet", """
*U: {partner} is doing {diet} this month, so no {avoid} in anything we cook
A: Noted. I'll keep that in mind for dinner ideas until {partner} is done.
""", """
c: what is my other half cutting out at the moment?
c: which foods are off the menu for my partner this month?
r: what eating plan is {partner} following?
"""),
    ("cast_iron", """
U: My {pan} has rust spots, did I ruin it?
*A: Not at all. Scrub the rust off with steel wool, wash and dry it on the hob, rub in a very thin film of {oil}, then bake it upside down at {cels} degrees for an hour.
""", """
c: how do I rescue the rusty skillet?
c: what oil did you say to season the pan with?
r: how do I fix the rust on the {pan}?
"""),
    ("pizza_dough", """
*U: Best pizza dough so far: {hyd}% hydration, {salt} g salt per kilo, {proof} hours cold proof in the fridge, {flour} flour
A: That's a keeper. I'll save it as your house recipe, {partner} will be pleased.
""", """
c: what were the numbers for my best pizza base?
c: how long did the good dough rest in the fridge?
"""),
]

TRAVEL = [
    ("flight_status", """
U: Is my flight {flight} tomorrow morning on time?
C: flight_status|flight={flight}
*R: {flight} {airport} to {airport2}: departs {hhmm} from gate {gate}, terminal {terminal}, on time
A: Looks good. I'll check again tonight in case anything changes for {flight}.
""", """
c: which gate does my plane leave from?
c: what terminal was tomorrow's departure?
r: where does {flight} board?
"""),
    ("hotel", """
~U: We're staying at {hotel} in {city} from the {dom}th
A: Nice, I'll keep {hotel} in mind for directions when you land.
---
*U: {hotel} overbooked us, we're now at {hotel2}, right by {landmark} instead
A: What a hassle; at least {landmark} is a great spot to be near.
""", """
c: where are we sleeping on the trip now?
c: which hotel did we end up with?
r: what replaced {hotel} after the overbooking?
"""),
    ("passport", """
*U: My passport runs out on {date}, I need a new one before we go to {country}
A: Good catch. Some countries want six months left on it, so don't leave it late for {country}.
""", """
c: when does my travel document expire?
c: what's the expiry date on my ID for going abroad?
"""),
    ("plugs", """
U: What kind of plugs do they use in {country}?
*A: {country} uses type {plug} sockets at {volt} volts, so pack an adapter; phone and laptop chargers cope with the voltage on their own.
""", """
c: which adapter do I need to pack?
c: what electrical outlets will we find there?
r: what sockets are used in {country}?
"""),
    ("car_rental", """
*U: Rental car booked with {rental}, reference {ref}, pick-up at the airport desk at {hhmm}
A: Great. Don't forget the licence; {partner} should bring theirs too if they want to drive.
""", """
c: what's the booking number for the hire car?
c: what time do we collect the car?
r: what's the {rental} confirmation code?
"""),
    ("museum_hours", """
U: When is the {museum} open?
C: web_search|query={museum} opening hours
*R: {museum}: open {openhours}, closed on {weekday}s; adult ticket {money}, free for under-18s
A: Worth booking the {museum} online to skip the queue.
""", """
c: on which day is that gallery shut?
c: how much are tickets for the museum we looked up?
r: what does the {museum} cost to get in?
"""),
    ("insurance_travel", """
*U: Travel insurance is with {insurer}, policy number {policy}, emergency line {phone}
A: Saved. Hope you never need to ring {insurer}!
""", """
c: who do I call if I get hurt abroad?
c: what's my cover's policy reference?
r: what's the emergency number for {insurer}?
"""),
    ("food_tip", """
*U: {colleague} says we absolutely have to try the {cityfood[1]} at {restaurant} near the harbour in {cityfood[0]}
A: I'll put it on the trip list, {colleague} seems to know the place well.
""", """
c: which dish did my coworker tell me not to miss?
c: where should we eat by the port?
r: what food did {colleague} recommend?
"""),
    ("visa", """
U: Do I need a visa for {country}?
*A: For a tourist stay under {days} days you need an e-visa for {country}: apply online at least {lead} days ahead; it costs about {fee}.
""", """
c: how far ahead do I have to apply for the entry permit?
c: what's the fee for the electronic travel authorisation?
r: do I need paperwork to visit {country}?
"""),
    ("two_hotels", """
*U: First option for the long weekend: {hotel}, {money} a night with breakfast, ten minutes from the beach
A: Sounds nice for you and {partner}. What's the other one?
*U: The second one is {hotel2}, cheaper at {money2} but no breakfast and right next to the station
A: For a lazy weekend I'd take the first; for day trips by train, the second. {partner} might have a view too.
""", """
c: which two places were we choosing between for the weekend away?
c: what were the accommodation options for the long weekend?
"""),
    ("train", """
*U: Our train to {city} leaves at {hhmm} from platform {platform}, we're in coach {coach}, seats {seat} and {seat2}
A: Got it. I'll remind you 45 minutes before, and {partner} too.
""", """
c: which carriage are we sitting in?
c: what platform do we need for the train?
r: when does the train to {city} depart?
"""),
]

HEALTH = [
    ("two_meds", """
*U: My morning pill is {med} {mg} mg, with breakfast
A: Got it. Any others, so I can make you a full list for {doctor}?
*U: And in the evening I take {med2}, {mg2} mg, before bed
A: Thanks, that's the full list for {doctor} then.
""", """
c: which medicines do I take every day?
c: what's on my list of daily tablets?
"""),
    ("dentist", """
~U: Dentist appointment with Dr. {dentist} on {weekday} at {hhmm}
A: I'll remind you the day before you see Dr. {dentist}.
---
*U: Dr. {dentist}'s office called, they moved me to {weekday2} at {hhmm2}
A: Okay, I've moved the reminder for Dr. {dentist} as well.
""", """
c: when am I seeing the dentist now?
c: what day is my teeth check-up?
r: when is my appointment with Dr. {dentist}?
"""),
    ("medication", """
*U: {doctor} put me on {med} {mg} mg, one every morning with food, for {weeks} weeks
A: I can remind you every morning at {hhmm} if that helps.
""", """
c: how long do I have to keep taking the tablets?
c: what dose did the GP prescribe?
r: how much {med} am I supposed to take?
"""),
    ("bp_log", """
U: Log my blood pressure, {sys} over {dia}, pulse {pulse}
C: health_log|metric=blood pressure|value={sys}/{dia}|pulse={pulse}
*R: Logged {sys}/{dia} mmHg, pulse {pulse}. {readings} readings this month, average {avg} mmHg
A: Thanks. If it stays like this, mention it to {doctor} at your next visit.
""", """
c: what's my average blood pressure for the month?
c: how many pressure measurements have I logged this month?
"""),
    ("race_plan", """
U: I want to run a {race} in {weeks} weeks, how should I build up?
*A: Run {runs} times a week: one long run that grows by about {km} km each week, one easy run and one with short fast intervals; ease off every fourth week and taper over the last {taper} days.
""", """
c: how often should I go jogging to get ready for the race?
c: by how much should the long run grow each week?
r: how do I train for the {race}?
"""),
    ("allergy_test", """
*U: The allergy test came back: I'm allergic to {allergen} and mildly to {allergen2}
A: Good to know. I'll keep that in mind, and maybe tell {partner} too.
""", """
c: what did the skin prick test show?
c: which things am I sensitive to?
"""),
    ("physio", """
*U: My physio {physio} gave me {ex}, {ex2} and {ex3} for my {joint}, {sets} sets a day
A: Want a daily reminder for those? I can nudge you after work, {partner} can join.
""", """
c: what stretches did the physiotherapist give me?
c: how many rounds a day am I meant to do for my rehab?
r: which exercises did {physio} prescribe?
"""),
    ("vaccine", """
*U: Got my {vaccine} jab today at {clinic}, booster due in {months} months
A: Well done. I'll remind you when the booster comes up, {partner} might need one too.
""", """
c: when is my next shot due?
c: where did I get vaccinated?
r: when do I need the next {vaccine} dose?
"""),
    ("sleep", """
U: I keep waking up at {hour} in the morning and can't get back to sleep, {partner} says I toss and turn
*A: Keep the bedroom at about {bedtemp} degrees, no screens in the last hour, and if you lie awake more than twenty minutes, get up and read something dull until you feel drowsy. And no coffee after {cutoff}.
""", """
c: what did you say about coffee and my sleep problems?
c: how warm should my bedroom be for better rest?
"""),
    ("gym_class", """
*U: Signed up for {sport} at {gym} on {weekday}s at {hhmm}, the instructor is {person}
A: Nice! Want me to nudge you an hour before {sport}?
""", """
c: which evening is my fitness class?
c: who teaches the course I joined at the gym?
r: who runs the {sport} class?
"""),
    ("eye_test", """
*U: Eye test results: right {rx} and left {rx2}, the optician at {optician} says glasses only for driving
A: Not bad at all; I'll remind you to keep a pair in the car, and {partner} too.
""", """
c: what was my prescription for the left eye?
c: do I need specs all the time?
r: what did {optician} measure?
"""),
    ("fever", """
U: I've had a fever of {fever} and a sore throat since yesterday, {partner} is worried
*A: Rest, plenty of fluids and paracetamol for the aches; see a doctor if it climbs above 39.5, lasts more than {sickdays} days, or you struggle to swallow or breathe; {partner} can keep an eye on you meanwhile.
""", """
c: when did you say I should go to the doctor with my temperature?
c: what's the advice for my sore throat?
"""),
]

FAMILY = [
    ("kids_sports", """
*U: {son}'s football practice is on {weekday}s at {hhmm}, at the club by the ring road
A: Noted. Does {daughter} have anything that week too?
*U: {daughter} has swimming on {weekday2}s at {hhmm2}, at the {town} pool
A: Two sports, two days; {son} and {daughter} are busy kids.
""", """
c: when are the kids' sports activities?
c: what days do the children train?
"""),
    ("gift_mom", """
*U: {mom} hinted she'd love {gift} for her birthday
A: I'll remind you two weeks ahead so there's time to order it for {mom}.
""", """
c: what present does my mother want?
c: what did mum drop hints about?
r: what would {mom} like as a gift?
"""),
    ("school_play", """
~U: {daughter}'s school play is on {weekday} at {hhmm}, she's a {role}
A: How exciting, {daughter} as a {role}!
---
*U: They moved {daughter}'s play to {weekday2}, same time
A: Okay, I'll make sure you don't miss {daughter} on stage.
""", """
c: when is the school performance now?
c: which day is our girl on stage?
r: when is {daughter}'s play?
"""),
    ("shoe_size", """
*U: {son} is now a size {shoe} in shoes and {cloth} in clothes, he grows so fast
A: Noted for the next shopping trip with {son}.
""", """
c: what size trainers does my boy wear?
c: what clothing size is our son now?
r: what shoe size is {son}?
"""),
    ("babysitter", """
*U: The babysitter {person} charges {rate} an hour, her number is {phone}
A: Saved. Shall I text {person} when you plan a night out?
""", """
c: how much does the sitter cost per hour?
c: how do I contact the woman who looks after the kids?
r: how do I reach {person}?
"""),
    ("anniversary", """
*U: {partner} and I got married on {date} at {venue}
A: {venue} sounds beautiful. I'll remind you before the anniversary.
""", """
c: when is our wedding anniversary?
c: where did we tie the knot?
r: when did I marry {partner}?
"""),
    ("dad_cabin", """
*U: Every {holiday} we go to {dad}'s cabin at {lake}, it's about {drive} hours' drive
A: That sounds like a lovely tradition; say hi to {dad}.
""", """
c: where do we spend the holidays with my father?
c: how long is the drive to dad's place by the water?
r: where is {dad}'s cabin?
"""),
    ("teacher", """
*U: {daughter}'s teacher this year is {person}, parents' evening is in room {room}
A: Thanks, I'll remind you on the day you go to see {person}.
""", """
c: who teaches my girl this year?
c: where is the parents' meeting?
r: which room is the meeting with {person} in?
"""),
    ("child_fever", """
U: {son} has a temperature of {fever}, what should I do?
*A: Keep {son} drinking, dress him lightly and give a children's dose of paracetamol by his weight. Call the doctor if it lasts more than {sickdays} days, goes above 39.5, or he seems floppy or won't drink.
""", """
c: when did you say to ring the doctor about my little boy's fever?
c: what was the advice for the kid's temperature?
r: what should I do about {son}'s fever?
"""),
    ("brother_job", """
*U: {brother} just started as {job} at {employer}
A: Good for {brother}! Maybe a card to congratulate him?
""", """
c: what's my brother's new job?
c: where is my sibling working now?
r: what does {brother} do now?
"""),
    ("wedding_gift", """
*U: For {person}'s wedding we're giving {wedgift}, and {sister} is chipping in {money}
A: Generous of {sister}. Want me to find a card to go with it?
""", """
c: what are we getting the couple for the wedding?
c: how much is my sister putting towards the present?
r: what's our gift for {person}'s wedding?
"""),
    ("grandma_phone", """
*U: Grandma {person} switched to a new number, {phone}, the old landline is gone
A: Updated. {mom} will be glad she can reach her again.
""", """
c: what's granny's new phone number?
c: how do I call my grandmother now?
r: what's {person}'s number?
"""),
]

WORK = [
    ("deadlines", """
*U: The {doc} for {boss} is due on {weekday}
A: Okay, {weekday} for {boss}. Anything else this week?
*U: And {colleague} needs the {doc2} by {weekday2} at the latest
A: Two deliverables then; I'll remind you the day before each, starting with the one for {boss}.
""", """
c: what do I have to hand in this week, and to whom?
c: which documents are due soon?
"""),
    ("launch", """
~U: The {project} launch is set for {date}
A: Noted, {project} is on the calendar.
---
*U: {boss} pushed the {project} launch back to {date2}, the payment provider isn't ready
A: That gives the {project} team some breathing room at least.
""", """
c: when are we shipping the project now?
c: why did the release get delayed?
r: what's the new date for {project}?
"""),
    ("sync_room", """
*U: The weekly sync with {colleague} is in room {mroom} on {weekday}s at {hhmm}
A: Noted; I'll remind you ten minutes before you meet {colleague}.
""", """
c: where is my recurring meeting with my coworker?
c: what time is the weekly catch-up?
r: where do I meet {colleague} every week?
"""),
    ("per_diem", """
U: What's the per diem for the {confcity} conference trip?
C: company_docs|query=travel policy per diem {confcity}
*R: Travel policy ({confcity}): meals {perdiem} EUR per day, hotel up to {cap} EUR per night, receipts within {ddays} days of return
A: So book the {confcity} hotel under the cap and keep every receipt.
""", """
c: how much can I spend per night on accommodation for the business trip?
c: how long do I have to hand in my receipts?
r: what's the meal allowance in {confcity}?
"""),
    ("it_ticket", """
*U: IT ticket for my laptop's broken keyboard is {ticket}, they said {itdays} working days
A: Annoying. Want me to draft a polite chaser for {boss} if it drags on?
""", """
c: what's the reference for the IT request?
c: how long will the computer repair take?
"""),
    ("slides", """
*U: {boss} said my slides were too dense and wants {slides} slides max for the board meeting
A: A tight deck it is; I can help trim it before {boss} sees it again.
""", """
c: how many slides am I allowed for the board?
c: what was the criticism of my presentation?
r: what did {boss} think of my deck?
"""),
    ("leave_cover", """
*U: {person} is on parental leave until {date}, {person2} covers the {area} accounts meanwhile
A: Thanks; I'll point {area} questions to the right person.
""", """
c: who is handling the accounts while my coworker is off?
c: when is my colleague back from leave?
r: who covers for {person}?
"""),
    ("decline", """
U: Help me decline the offer from {vendor} politely, their contact is {person}
*A: Here's a draft: "Dear {person}, thank you for the detailed proposal. After careful review we've decided not to go ahead this quarter, as our budget is committed elsewhere. We'd be glad to stay in touch for future projects."
""", """
c: what did the refusal email to the supplier say?
c: how did we word the no to the vendor?
r: what did I write back to {person}?
"""),
    ("review", """
*U: My performance review is on {date} with {boss}; I'm going to ask for {raise} percent more
A: Good luck! We can rehearse it before you talk to {boss}.
""", """
c: how big a raise am I going to ask for?
c: when is my appraisal?
"""),
    ("talk", """
*U: My talk at {conf} got accepted, I'm on day two at {hhmm}, {hall}
A: Congratulations on {conf}! Want help with the slides?
""", """
c: when am I presenting at the event?
c: which hall is my session in?
r: when is my {conf} talk?
"""),
    ("vpn", """
U: The VPN at {employer} keeps dropping every few minutes
*A: Switch the VPN client from UDP to TCP in its settings, turn off the laptop's Wi-Fi power saving, and if it still drops, ask IT to raise the session timeout above {timeout} minutes.
""", """
c: how did you say to stop the remote connection from disconnecting?
c: which protocol should the office tunnel use?
r: how do I fix the {employer} VPN?
"""),
]

CAR = [
    ("tyre_pressure", """
U: What tyre pressure does the {car} need?
*A: For the {car} it's {psi} psi front and {psirear} rear when the tyres are cold; add about 3 psi when it's fully loaded.
""", """
c: how much air do my car's tires need?
c: what pressure for the back wheels?
r: what's the right tyre pressure for the {car}?
"""),
    ("service", """
*U: The {car} had its service at {garage} today, next one due at {odo} km or in a year
A: I'll remind you when it's close; {garage} was quick this time.
""", """
c: at what mileage is the car due for maintenance?
c: where did I get the vehicle serviced?
r: when is the {car} due for its next check?
"""),
    ("parking", """
*U: At the airport I parked in zone {zone}, level {level}, space {space}
A: Noted. Safe travels; ask me on the way back, {partner} too.
""", """
c: where did I leave the car?
c: which floor of the car park?
"""),
    ("car_insurance", """
~U: Car insurance renews on {date} with {insurer}, {money} a year
A: I'll remind you a month before, in case {insurer} tries to raise it.
---
*U: I switched the car insurance to {insurer2}, {money2} a year from next month
A: Nice saving. I'll forget about {insurer} then.
""", """
c: who insures my car now?
c: what do I pay per year for the car cover?
r: which company replaced {insurer}?
"""),
    ("warning_light", """
U: An orange light that looks like a horseshoe with an exclamation mark just came on in the {car}
*A: That's the tyre pressure warning on the {car}: one tyre is low. Check all four at the next petrol station; if the light comes back within a day, you may have a slow puncture.
""", """
c: what did that dashboard symbol mean?
c: what should I do about the warning lamp?
"""),
    ("ev_charger", """
U: Find me a fast charger near {landmark}
C: map_search|query=fast charger near {landmark}
*R: {charger} at {landmark}: {kw} kW, {stalls} stalls, {dist} km away, {price} per kWh
A: {charger} is your nearest option; want directions?
""", """
c: how far away was the quick charging station?
c: how much did the rapid charger cost per unit?
r: what's the charging speed at {charger}?
"""),
    ("roadside", """
*U: Roadside assistance for the {car} is with {roadside}, membership {member}
A: Saved; hopefully you never need them, {partner}.
""", """
c: who do I call if the car breaks down?
c: what's my breakdown cover number?
"""),
    ("winter_tyres", """
*U: The winter tyres are stored at {garage}, the swap is booked for {date}
A: Good timing before the frost; I'll remind you the day before you go to {garage}.
""", """
c: where are my snow tyres kept?
c: when is the tyre change appointment?
"""),
]

PETS = [
    ("dog_vacc", """
*U: {dog} had her {dogvacc} shot today, the next one is due in {month}
A: Good girl, {dog}! I'll put a reminder in.
""", """
c: when does the dog need her next jab?
c: which vaccine did our puppy just get?
r: when is {dog}'s next vaccination due?
"""),
    ("cat_food", """
U: How much should {cat} eat? He's {catkg} kilos
*A: For an adult cat of {catkg} kg that's about {kcal} kcal a day, roughly {grams} g of dry food split over two meals; less if he also gets wet food.
""", """
c: how many grams of kibble should the cat get?
c: how much dry food a day for our moggy?
r: what's the daily food amount for {cat}?
"""),
    ("petsitter", """
*U: When we're away, {person} feeds the animals; she has a key and charges {rate} per visit
A: Saved. Want me to message {person} next time you travel?
""", """
c: who looks after the pets when we're on holiday?
c: what does the animal sitter charge?
r: how much does {person} charge?
"""),
    ("microchip", """
*U: {dog}'s microchip number is {chip}, registered with {chipreg}
A: Saved, in case {dog} ever wanders off.
""", """
c: what's the ID on the dog's implant?
c: which database is our dog registered in?
"""),
    ("toxic", """
U: {dog} just ate a few {toxic}, is that dangerous?
*A: It can be: {toxic} are toxic to dogs even in small amounts. Call your vet or an animal poison line now, tell them {dog}'s weight and how many she ate; don't try to make her sick yourself.
""", """
c: what did you say to do when the dog ate something poisonous?
c: are the things she swallowed bad for dogs?
"""),
    ("vet", """
*U: Our vet is {person} at {vetclinic}, the out-of-hours line is {phone}
A: Saved {vetclinic}'s details, for {dog} and {cat}.
""", """
c: who is the animals' doctor?
c: what number do I ring for the vet at night?
r: what's the emergency number of {vetclinic}?
"""),
    ("litter", """
*U: {cat} only likes the {litter} litter, the clumping one makes him sneeze
A: Good to know; I'll put it on the list when we run low, poor {cat}.
""", """
c: which cat sand should I buy?
c: why does the cat sneeze?
"""),
    ("dog_walker", """
~U: The dog walker {person} comes at {hhmm} on weekdays
A: Great, {dog} will love that.
---
*U: {person} changed her schedule, she now comes at {hhmm2}
A: Noted, {dog}'s walk has moved then.
""", """
c: what time does the dog walker come now?
c: when is the pup picked up for her walk?
r: when does {person} arrive?
"""),
]

GARDEN = [
    ("greenhouse", """
U: How warm is it in the greenhouse right now?
C: sensor_read|sensor=greenhouse
*R: greenhouse: {gtemp} °C, humidity {hum}%, soil moisture {soil}%
A: Warm in there; maybe open the vent a little for the {tomato} plants.
""", """
c: what was the soil moisture in the glasshouse?
c: how humid did the greenhouse get?
"""),
    ("tomatoes", """
*U: This year I planted {tomato} and {tomato2} tomatoes along the south fence
A: Lovely choices; I can remind you to pinch out the side shoots.
""", """
c: which tomato varieties did I put in?
c: what's growing along the sunny fence?
"""),
    ("frost", """
U: When can I put the {seedling} seedlings outside?
*A: Wait until nights stay above {mintemp} °C, which here is usually after the middle of {month}; harden them off for a week first by putting them out during the day.
""", """
c: when is it safe to move the young plants outdoors?
c: how cold can the nights be before planting out?
"""),
    ("whitefly", """
U: There are tiny white flies under the leaves of my {plant}
*A: That's whitefly. Hang yellow sticky traps, hose the undersides of the leaves, and spray with {remedy} every five days for two weeks.
""", """
c: what should I spray on the bugs on my plants?
c: how do I get rid of those little insects under the leaves?
"""),
    ("seeds", """
*U: {neighbour} gave me {seeds} seeds from her allotment, they go in the ground in {month}
A: How kind of {neighbour}. I'll remind you when it's time.
""", """
c: what seeds did the lady next door give me?
c: when should I sow the seeds from my neighbour?
"""),
    ("irrigation", """
U: Water the vegetable beds for {mins} minutes every evening at {hhmm}
C: home_control|device=irrigation|action=schedule|value={mins} min daily at {hhmm}
*R: Irrigation zone 2 (vegetable beds): {mins} min daily at {hhmm}; skipped automatically when rain over {rainmm} mm is forecast
A: Set; the beds will get their water every evening.
""", """
c: when does the sprinkler skip watering?
c: how long does the veg patch get watered?
"""),
    ("compost", """
U: My compost smells bad and it's all slimy
*A: It's too wet and has too many greens. Mix in dry browns, shredded cardboard, straw or dry leaves, about {ratio} browns to one of greens, and turn it every week so air gets in.
""", """
c: how do I fix the stinky compost heap?
c: what ratio of dry stuff did you suggest for the compost?
"""),
    ("mower", """
*U: The lawn mower is a {mower}, the blade was sharpened at {shop} in {month}
A: Noted; a sharp blade makes a big difference for the lawn.
""", """
c: where did I get the mower blade done?
c: what model is our lawnmower?
"""),
]

FINANCE = [
    ("budget", """
*U: Monthly budget from now on: rent {rent}, groceries {groceries}, savings {savings}, and the rest is fun money
A: Clear and simple. I can check in at the end of each month.
""", """
c: how much do we set aside each month?
c: what's the food allowance in our budget?
"""),
    ("card", """
*U: I cancelled the card ending in {cardend} after the fraud alert, the new one arrives in {carddays} days
A: Good call. I'll remind you to update your subscriptions when it comes.
""", """
c: which card did I block?
c: when will the replacement bank card come?
"""),
    ("streaming", """
~U: {streaming} renews on the {dom}th at {money} a month
A: Noted; I'll remind you before it renews in case you want to cancel.
---
*U: {streaming} raised the price, it's {money2} a month from the next renewal
A: That adds up over a year. Still keeping it?
""", """
c: what does the streaming service cost now?
c: how much is the TV subscription after the increase?
r: what's the new price of {streaming}?
"""),
    ("loan", """
*U: I lent {brother} {money} for his car repairs, he'll pay me back by {month}
A: Noted, I'll keep track of it for you.
""", """
c: how much does my brother owe me?
c: when am I getting the car money back from my sibling?
"""),
    ("tax", """
U: When is the tax return due this year?
C: web_search|query=tax return deadline {year}
*R: Tax return {year}: online filing deadline {date}; paper forms by {date2}; late filing fine from {money}
A: Plenty of time, but let's not leave it to the last week.
""", """
c: what's the last day to file online?
c: what's the penalty if I'm late with my taxes?
"""),
    ("accountant", """
*U: Our accountant is {person} at Hollis & Webb, she charges {money} for the annual return
A: Saved her details for tax season.
""", """
c: who does our books?
c: how much does the tax adviser cost?
"""),
    ("etf", """
U: Should I keep my emergency fund in the {etf} ETF?
*A: I wouldn't: an emergency fund belongs in an instant-access savings account, about three to six months of expenses, so you never have to sell investments at a bad moment. Put money beyond that in the fund.
""", """
c: where did you say to keep my rainy-day money?
c: how many months of costs should the safety cushion be?
"""),
    ("mortgage", """
*U: The bank offered {mortrate}% fixed for {fixyears} years on the mortgage, decision by {date}
A: That's a decent offer. Want me to compare it with a shorter fixed period?
""", """
c: what interest did the bank quote on the house loan?
c: how long would the rate be locked?
"""),
]

SHOPPING = [
    ("order", """
U: Where's my {product} order?
C: order_status|order={order}
*R: Order {order} ({product}): out for delivery with {courier}, expected {weekday} between {window}
A: Nearly there, {son} can sign for it if you're out.
""", """
c: when is the parcel arriving?
c: which courier is bringing the package?
r: when will the {product} be delivered?
"""),
    ("return", """
*U: I sent the {product} back to {store}, the refund of {money} should arrive within {refunddays} days
A: I'll check with you if it hasn't shown up by then.
""", """
c: how much money am I getting back for the return?
c: which shop did I send the item back to?
r: when do I get the refund for the {product}?
"""),
    ("oat_milk", """
*U: Only buy the {brand} oat milk, the other one curdles in coffee
A: Noted for the shopping list, {partner}.
""", """
c: which plant-based milk should we get?
c: what's the milk that doesn't split in hot drinks?
"""),
    ("appliance", """
*U: The {appliance} we liked at {store} was the {applmodel}, {money}, on sale until {date}
A: I'll remind you a few days before the sale ends.
""", """
c: which model was the one we liked in the shop?
c: until when is the sale price valid?
"""),
    ("loyalty", """
*U: Our {store} loyalty card number is {loyal}, it's under {partner}'s name
A: Saved, so you can use it at the till without the card.
""", """
c: what's the membership number for the points card?
c: whose name is the rewards card under?
"""),
    ("warranty", """
*U: The {gadget} is under warranty until {date}, the receipt is in the blue folder in the hall
A: Good system. I'll remind you before it runs out.
""", """
c: where's the receipt for the thing with the guarantee?
c: until when is the device covered?
"""),
    ("gift_card", """
*U: We have a {store} gift card with {money} left, the code is {giftcode}
A: Noted; use it before it expires.
""", """
c: how much is left on the voucher?
c: what's the code of the gift certificate?
"""),
    ("price_check", """
U: Is {money} a good price for a {kitchenthing}?
*A: It's on the high side: the same {kitchenthing} usually sells for less in the sales, and prices drop around {sale}. If you can wait, wait.
""", """
c: when did you say prices usually drop?
c: should I buy the kitchen gadget now or later?
"""),
]

ELECTRONICS = [
    ("gpio", """
U: Which pin should I use for the {sensor} data line on the ESP32-S3 board?
*A: Use GPIO {gpio}: it's free on that board and not a strapping pin. Add a {pullup} pull-up to 3.3 V and keep the wire under about {wire} cm.
""", """
c: which pin did you pick for the sensor signal?
c: what pull-up value goes on the data wire?
"""),
    ("petg", """
*U: PETG settings that finally worked on the {printer}: nozzle {cels} °C, bed {bedc} °C, fan {pct}%
A: Great, I'll keep those as your PETG profile.
""", """
c: what temperatures work for the filament that kept stringing?
c: what hotend temperature did I settle on for the printer?
"""),
    ("i2c", """
*U: The OLED sits at I2C address {oledaddr} and the {envsensor} at {envaddr} on the same bus
A: Noted; no clash between them then.
""", """
c: what's the display's bus address?
c: where is the environmental sensor on the two-wire bus?
"""),
    ("parts", """
*U: Ordered {qty} {part} from {partshop}, arriving {weekday}
A: I'll remind you to check the mailbox.
""", """
c: what components did I buy for the project?
c: when will the electronics parts arrive?
"""),
    ("battery", """
U: Read the battery monitor on the weather station
C: sensor_read|sensor=weather station battery
*R: weather station battery: {volts} V, {soc}% charge, estimated {runtime} days left at current draw
A: Plenty left for now; I'll warn you when it gets low.
""", """
c: how many days will the outdoor station last on its cell?
c: what voltage did the station's power pack show?
"""),
    ("firmware", """
*U: Flashed MicroPython {mpver} on the {board} today, the old build had a memory leak
A: Nice; let's see if the leak is gone after a day of uptime.
""", """
c: which firmware version is on the dev board now?
c: why did I reflash the board?
"""),
    ("resistor", """
U: What resistor for a red LED on 5 volts at 20 mA?
*A: With about 2 V across a red LED you need (5 - 2) / 0.02 = 150 ohms; 150 is a standard value, so use that, or 220 if you want it a little dimmer.
""", """
c: what resistance did you calculate for the light?
c: which value should the current limiting part be?
"""),
    ("soldering", """
*U: Soldering iron: the {tip} tip works best for SMD, at {irontemp} °C with {solder} solder
A: Good notes; SMD is all about the right tip.
""", """
c: which tip shape do I use for the tiny parts?
c: what temperature for the soldering iron?
"""),
]

BOOKS = [
    ("book_rec", """
*U: {friend} recommended {book} by {author}, says it's the best thing they've read this year
A: I'll put it on your reading list; {friend} has good taste.
""", """
c: what novel did my pal suggest?
c: who wrote the book my friend recommended?
r: what did {friend} recommend reading?
"""),
    ("book_club", """
*U: Book club meets on {weekday} at {person}'s place, we're reading {book} this month
A: I'll remind you the day before, in case you're behind on chapters.
""", """
c: which book are we discussing this month?
c: where is the reading group meeting?
"""),
    ("lent", """
*U: I lent my copy of {book} to {colleague}, remind me to get it back
A: I'll nudge you in a few weeks to ask {colleague} for it.
""", """
c: who borrowed my book?
c: which title is still on loan?
"""),
    ("quote", """
*U: Favourite line from {book}: "Time is the substance I am made of."
A: A beautiful line; I'll keep it with your notes.
""", """
c: what was that passage I loved?
"""),
    ("library", """
U: When are my library books due?
C: library_account|action=loans
*R: 2 loans: {book}, due {date}; {book2}, due {date2}; 3 renewals left
A: You have a bit of time; I can renew them if needed.
""", """
c: when do I have to return the borrowed books?
c: how many times can I still extend my loans?
"""),
    ("audiobook", """
U: Is the audiobook of {book} any good?
*A: People love {narrator}'s narration; it runs about {runhours} hours and the abridged version cuts a lot, so get the unabridged one.
""", """
c: who reads the audio version?
c: how long is the audiobook I asked about?
"""),
    ("goal", """
*U: My reading goal this year is {goal} books, I'm at {done} so far
A: You're on track; keep going.
""", """
c: how many books am I aiming for?
c: how far along am I with my reading target?
"""),
    ("signing", """
*U: {author} is signing books at {bookshop} on {date} at {hhmm}
A: That sounds fun; I'll remind you the morning of.
""", """
c: when is the author signing?
c: where's the book signing?
r: when can I meet {author}?
"""),
]

FRAMES = {"home": HOME, "cooking": COOKING, "travel": TRAVEL, "health": HEALTH, "family": FAMILY, "work": WORK,
          "car": CAR, "pets": PETS, "garden": GARDEN, "finance": FINANCE, "shopping": SHOPPING,
          "electronics": ELECTRONICS, "books": BOOKS}
