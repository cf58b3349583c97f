"""Long-message training data for the importance classifier.

Deterministic (seeded). Writes data/importance/long_messages.jsonl.

Sections:
  PAIRS_*   hand-written contrastive pairs: one long message with a slot {X};
            filled once with a binding clause (CRITICAL) and once with a soft
            clause (RELEVANT). Both rows share one group id.
  SOLO_*    hand-written standalone long messages with their own label.
  generated compositional rows (opener + content + clause + closer) at the end;
            every output of one template shares one group id.
"""

import json
import os
import random

random.seed(20240611)

# (domain, role, text_with_{X}, critical_clause, soft_clause)
PAIRS_EN = [
    (
        "travel",
        "user",
        "Okay so here's the plan so far: we land in Bangkok on the 14th, spend four nights near Sukhumvit, then take the night train to Chiang Mai for three nights and maybe fly down to Krabi at the end. {X} Could you suggest which areas to stay in and whether the night train is worth it?",
        "Our total budget for hotels is strictly 1,200 dollars and cannot exceed that, so please keep every suggestion inside it.",
        "We'd like hotels to come to around 1,200 dollars in total, but that's flexible if something is really nice.",
    ),
    (
        "travel",
        "user",
        "hi, we are a family of four, two kids aged 6 and 9, going to Lisbon for a week in July. we want beaches, a bit of history, tram 28, maybe a day in Sintra. {X} what would a good week look like?",
        "my son uses a wheelchair so everything has to be step-free, no exceptions, please don't suggest anything he can't get into.",
        "the kids get tired easily so it would be nice to keep walking to a minimum where possible.",
    ),
    (
        "travel",
        "assistant",
        "Here's a draft for your three days in Rome. Day 1: Colosseum and Forum in the morning, lunch in Monti, Pantheon and Piazza Navona at sunset. Day 2: Vatican Museums at 8 am, St Peter's, then Trastevere for dinner. Day 3: Villa Borghese and the Spanish Steps. {X}",
        "Because you told me your mother cannot climb stairs at all, I skipped the Colosseum upper levels and St Peter's dome and picked restaurants with ground-floor seating.",
        "I kept the days fairly relaxed since you mentioned you prefer a slower pace, but you can easily add the dome climb if you feel up to it.",
    ),
    (
        "travel",
        "user",
        "So after a lot of back and forth we decided on Japan in April: Tokyo for five days, then Hakone, Kyoto and Osaka. My partner really wants a ryokan night with an onsen, and I want to see at least one sumo practice. {X} Can you help with the route and JR pass question?",
        "One important thing: I have a pacemaker, so I can't use the hot springs or anything with strong electromagnetic equipment, keep that in mind for every suggestion.",
        "I'm not a huge fan of very crowded places, so if there are quieter alternatives I'd take them.",
    ),
    (
        "travel",
        "user",
        "We'll be in Iceland for eight days in October, renting a car in Reykjavik and doing the Golden Circle, the south coast up to Jokulsarlon, and maybe Snaefellsnes. {X} Which order makes the most sense and where should we sleep?",
        "We must return the car by 10 am on the 22nd because our flight leaves at 1 pm, that deadline is not movable.",
        "We'd ideally like to finish near the airport on the last night, but we can adjust.",
    ),
    (
        "food",
        "user",
        "I'm hosting a dinner for ten people next Saturday. Thinking of a mezze spread to start, then slow-roasted lamb shoulder, some roasted vegetables, and a dessert that can be made the day before. {X} Can you give me a full menu and a shopping list?",
        "Two of the guests have a severe sesame allergy, so absolutely no tahini, no sesame oil, no seeds anywhere, not even on the bread.",
        "A couple of guests aren't big fans of sesame, so maybe go easy on the tahini.",
    ),
    (
        "food",
        "user",
        "ok so weekly meal prep again, last time the chicken and rice bowls were great but got boring by Thursday. I cook on Sunday, have about two hours, and need lunches for five days plus three dinners. {X} something with more variety please",
        "I'm on a strict low-sodium diet after my kidney diagnosis, my doctor said under 1,500 mg a day, so keep everything within that.",
        "I'm trying to eat a bit less salt in general, so lighter on the soy sauce would be nice.",
    ),
    (
        "food",
        "assistant",
        "Here's a five-day plan: Monday lentil soup with crusty bread, Tuesday baked salmon with potatoes and green beans, Wednesday vegetable curry with rice, Thursday chicken fajitas, Friday homemade pizza. Each dinner takes under 40 minutes and serves four. {X}",
        "Since your daughter has celiac disease, every recipe uses certified gluten-free bread, tortillas and pizza base, and I flagged the soy sauce and stock cubes you need to check for gluten.",
        "I kept the spice level mild because you said the kids prefer less heat, but you can add chilli at the table.",
    ),
    (
        "food",
        "user",
        "We're doing a barbecue for my dad's 60th, about 25 people, garden party style. Burgers, sausages, corn, a couple of salads, and a big cake. My aunt is bringing potato salad. {X} How much meat should I buy and what else do we need?",
        "We're all observant Muslims so everything has to be halal, no pork at all and no alcohol in any of the marinades.",
        "Most of the family doesn't eat much pork, so maybe go mainly for beef and chicken.",
    ),
    (
        "health",
        "user",
        "I've been trying to get back into running after about a year off. Right now I can do 3 km at a slow pace, three times a week, and I'd like to be ready for a 10 km race in 12 weeks. {X} Can you write me a training plan?",
        "I had knee surgery in March and my physiotherapist said no running downhill and no more than four sessions a week, that's a firm limit.",
        "My knees sometimes feel a bit stiff, so I'd rather not do too much hill work.",
    ),
    (
        "health",
        "user",
        "My mom is 74 and she's coming to stay with us for a month. She likes walking, gardening and watching old films, and she sleeps badly in new places. {X} Any ideas for making her stay comfortable and keeping her active?",
        "She takes warfarin, so she must not have grapefruit, cranberry juice or any new supplements without her doctor approving it first.",
        "She's a bit picky with food and doesn't like very spicy things.",
    ),
    (
        "health",
        "assistant",
        "For the next two weeks I'd suggest three strength sessions a week of about 30 minutes: squats, glute bridges, rows with a resistance band, and wall push-ups, plus daily 20-minute walks. Increase the number of repetitions by two each week. {X}",
        "Because you're 28 weeks pregnant, I left out anything lying flat on your back and any exercise with jumping, and please stop immediately if you feel dizzy and check with your midwife.",
        "Since you said you prefer working out at home, everything here needs only a band and a chair.",
    ),
    (
        "health",
        "user",
        "so the dentist said I need two fillings and possibly a crown on the lower left molar, and they quoted me around 600 euros for everything. I'm booked for the 3rd. {X} is that a normal price and what should I ask them?",
        "I'm allergic to penicillin and to latex gloves, I had a bad reaction once, so I need to make sure they know.",
        "I'm a bit nervous at the dentist so I'd like to know what to expect.",
    ),
    (
        "finance",
        "user",
        "We're looking at buying our first flat. Prices in the area we like are around 320,000 euros for two bedrooms, we have 60,000 saved, and our combined income is about 7,000 a month after tax. {X} What mortgage options should we look at?",
        "Our monthly payment absolutely cannot exceed 1,600 euros, we've done the maths and anything above that doesn't work for us.",
        "We'd prefer the monthly payment to be somewhere around 1,600 euros, give or take.",
    ),
    (
        "finance",
        "user",
        "I'm self-employed as a graphic designer, made about 58,000 this year, mostly from three clients. I've got receipts for a new laptop, software subscriptions and a co-working space. {X} What can I deduct and how should I organise it?",
        "The return has to be filed by January 31st at the latest, I already got a warning letter last year so I can't miss it again.",
        "I'd like to get it done sometime in January if possible.",
    ),
    (
        "finance",
        "assistant",
        "Here's how I'd split your 2,500 monthly surplus: 1,000 into the emergency fund until it reaches six months of expenses, 800 into a broad index fund, 400 toward the car loan at 6.9 percent, and 300 for the holiday savings pot. {X}",
        "Since you told me you must not hold any individual stocks because of your employer's compliance rules, I only included broad index funds and no single-company shares.",
        "I tilted it slightly toward paying off debt since you said you like the feeling of being debt-free.",
    ),
    (
        "finance",
        "user",
        "me and my brother inherited our grandmother's house, it's worth about 250k, neither of us wants to live there. one option is to sell now, the other is to rent it out for a few years. {X} what are the pros and cons of each?",
        "the will says the house cannot be sold before 2027, the lawyer was very clear about that",
        "my brother would rather sell sooner but he's open to discussion",
    ),
    (
        "law",
        "user",
        "We're a small online shop selling handmade candles, about 300 orders a month, mostly within the EU but some to the UK and US. We collect names, addresses and emails, and use Mailchimp for the newsletter. {X} What do we need for a privacy policy?",
        "Our payment provider told us we must not store any card data on our own servers, so the setup has to stay that way.",
        "We'd like to keep the policy fairly short and readable if possible.",
    ),
    (
        "law",
        "assistant",
        "For the tenancy dispute, the usual steps are: send a formal letter listing the repairs and giving 14 days to respond, keep copies of all photos and messages, then contact the local housing authority if nothing happens. Small claims can cover the deposit. {X}",
        "Because you're still within the fixed term that ends in August, you cannot withhold rent yourself, doing so could breach the contract, so I didn't include that option.",
        "I kept it to the cheaper routes since you'd rather avoid paying for a lawyer.",
    ),
    (
        "law",
        "user",
        "I got an offer from a startup in Berlin, 75k plus 0.3 percent equity, hybrid, start date in September. The contract has a six-month probation and a notice period of three months after that. {X} Anything I should look out for before signing?",
        "My current contract has a non-compete clause that forbids me from working for a direct competitor for 12 months, and this startup is in the same market.",
        "I'd ideally like to negotiate a bit more vacation, they offer 26 days.",
    ),
    (
        "software",
        "user",
        "We're rebuilding our internal dashboard. Right now it's a Django monolith with jQuery on top, around 40 pages, and about 200 daily users. We're thinking React on the front and keeping Django as an API. {X} How would you structure the migration?",
        "The app must stay fully available during the migration, we have a contractual 99.9 percent uptime SLA with our clients.",
        "It would be nice to keep downtime low, but a short maintenance window at night is fine.",
    ),
    (
        "software",
        "user",
        "so the plan for the new logging pipeline: app servers ship logs via Fluent Bit to Kafka, a consumer writes them to ClickHouse, and Grafana on top for dashboards. roughly 2 TB a day. {X} thoughts on retention and partitioning?",
        "legal says user IP addresses must never be stored in plain text anywhere in the pipeline, they need to be hashed before Kafka.",
        "we'd rather not keep raw logs much longer than a month to save disk.",
    ),
    (
        "software",
        "assistant",
        "For the mobile release I'd suggest: freeze features on the 10th, run two rounds of QA on the staging build, submit to App Store review on the 17th since reviews take one to three days, and keep the Android rollout staged at 10, 50 and 100 percent. {X}",
        "Because the client's contract requires the release to be live no later than the 25th, I built in a buffer of five days for a possible rejection.",
        "I left a little slack at the end since you said the date is a rough target.",
    ),
    (
        "software",
        "user",
        "Can you help me design the database for a booking app? Users, venues, time slots, bookings and payments. About 50 venues at launch, maybe 2,000 bookings a day later. We use Postgres. {X}",
        "Double bookings must be impossible at the database level, the client was very explicit that this cannot depend on application code.",
        "I'd prefer something simple that's easy to change later.",
    ),
    (
        "business",
        "user",
        "I'm putting together a business plan for a small specialty coffee roastery. Rent for the unit is 2,200 a month, a 15 kg roaster costs about 35,000, and we'd sell wholesale to cafes plus an online subscription. {X} Can you help me build a first-year cash flow?",
        "The bank loan is capped at 80,000 and we cannot borrow more than that, so the plan has to fit inside it.",
        "We're thinking of borrowing around 80,000, though the bank might go a little higher.",
    ),
    (
        "business",
        "assistant",
        "Here's a rough go-to-market plan: launch in two cities with 20 pilot restaurants, offer the first three months at half price, hire two sales reps on commission, and run targeted Instagram ads at about 3,000 a month. Expect break-even in month 14. {X}",
        "Since your investors set a hard cap of 150,000 on spending before the Series A, I kept total burn at 142,000 and dropped the trade fair.",
        "I assumed a moderate marketing budget since you said you're flexible on spend.",
    ),
    (
        "business",
        "user",
        "Draft of the email to our supplier: Dear Mr Novak, thank you for the samples, the quality of the linen is excellent and we'd like to place a first order of 400 metres in natural and 200 in sage. {X} Could you confirm lead times and shipping costs to Rotterdam? Best regards, Anna",
        "Please note that we can only accept materials with a valid OEKO-TEX certificate, this is a strict requirement from our retail partner.",
        "If possible we would prefer delivery in early March.",
    ),
    (
        "events",
        "user",
        "Planning my sister's wedding reception: 120 guests, a barn venue outside the city, dinner around 7 pm, a band until midnight, and a late-night snack. {X} Can you help me with a timeline for the day and a list of vendors to book?",
        "The venue licence says music must stop at 11 pm sharp and no fireworks or open flames are allowed, we'd lose the deposit otherwise.",
        "We'd like the party to go on reasonably late if the venue allows it.",
    ),
    (
        "events",
        "assistant",
        "For the conference, I'd suggest registration from 8:30, keynote at 9:15, two parallel tracks until lunch at 12:30, workshops in the afternoon, and networking drinks from 17:30. Catering for 300 should include a hot buffet and a vegetarian option. {X}",
        "Because your policy forbids serving alcohol at company events, I replaced the drinks reception with a mocktail and coffee bar.",
        "I kept the drinks reception simple since you said you'd rather not make it too fancy.",
    ),
    (
        "events",
        "user",
        "hey so for the kids birthday party saturday, 15 kids aged 7-8, at our place, theme is dinosaurs, we have a bouncy castle booked 2-5pm and I was thinking pizza and a dino cake. {X} any game ideas?",
        "two of the kids have a nut allergy, one of them carries an epipen, so absolutely nothing with nuts, not even traces",
        "some parents are a bit fussy about sugar so maybe not too many sweets",
    ),
    (
        "family",
        "user",
        "My husband and I are trying to split chores better. I work 9 to 5, he works shifts, we have a toddler and a dog. Right now I do most of the cooking and he does the laundry and the dog walks. {X} Can you suggest a weekly schedule?",
        "Our daughter's paediatrician said she must nap at 1 pm every day without fail because of her sleep condition, so that slot is fixed.",
        "We'd like to keep weekend mornings mostly free if possible.",
    ),
    (
        "family",
        "assistant",
        "For your son's first week at the new school, it helps to visit the building beforehand, walk the route together, and agree on a simple after-school routine: snack, 20 minutes of downtime, then homework. Ask the teacher for a short check-in on Friday. {X}",
        "Since the custody agreement says only you and his grandmother may pick him up, make sure the school office has that in writing along with a copy of the order.",
        "Since you mentioned he's a bit shy, the check-in can be quite informal.",
    ),
    (
        "family",
        "user",
        "We're thinking about getting a dog. Two kids, 8 and 11, a small garden, both parents work but one is at home three days a week. Looking at maybe a beagle or a cocker spaniel, or adopting from a shelter. {X} What would you recommend?",
        "My younger son has severe asthma triggered by animal dander, his doctor said only hypoallergenic breeds, so that's non-negotiable.",
        "We'd rather have a dog that doesn't shed too much, but it's not a deal-breaker.",
    ),
    (
        "education",
        "user",
        "I'm preparing for the IELTS in about ten weeks. My reading and listening are around 7, writing is my weak spot at 5.5, speaking 6.5. I can study about 90 minutes on weekdays and more on weekends. {X} Can you make me a study plan?",
        "I need an overall 7.0 with no band below 6.5 for my visa, the immigration office won't accept anything lower.",
        "I'm hoping for around 7 overall, but 6.5 would still be okay for most of my options.",
    ),
    (
        "education",
        "assistant",
        "For your Year 9 history unit on the Industrial Revolution, I'd suggest six lessons: causes, textile mills, child labour, railways, living conditions in cities, and a final source-analysis task. Each lesson has a 10-minute starter, a main activity and a short exit ticket. {X}",
        "Because the school's policy says students must not use personal phones in class, all research tasks use the printed source packs instead of online searches.",
        "I kept the reading load fairly light since you said the class prefers hands-on activities.",
    ),
    (
        "education",
        "user",
        "My daughter is choosing universities, she wants to study marine biology. We've looked at Plymouth, Southampton, Aberdeen and Bangor. She likes the idea of a placement year. {X} how do these compare?",
        "she's dyslexic and needs guaranteed extra exam time and a note-taker, so the university must have proper disability support in place",
        "she'd rather not be too far from home but she's open to Scotland",
    ),
]

PAIRS_RU = [
    (
        "travel",
        "user",
        "Так, расклад такой: летим в Стамбул 3 мая, там четыре ночи, потом перелёт в Каппадокию на три дня, шары, пещерный отель, и в конце пара дней на море в Анталье. {X} Подскажите, в каком районе Стамбула лучше жить и как удобнее добираться между городами?",
        "Бюджет на всё, кроме билетов, строго 150 тысяч рублей, больше мы физически потратить не можем.",
        "На всё, кроме билетов, хотим уложиться примерно в 150 тысяч, но если что, можно чуть больше.",
    ),
    (
        "travel",
        "user",
        "привет) едем с мужем и ребёнком (ему 4 года) в Калининград на неделю в июле, хотим Куршскую косу, Светлогорск, зоопарк, ну и сам город посмотреть. {X} составишь маршрут по дням?",
        "у сына эпилепсия, ему нельзя долго находиться на солнце и нужен строгий режим сна, ложимся в 20:30 без вариантов",
        "сын быстро устаёт, так что хорошо бы не слишком много переездов",
    ),
    (
        "travel",
        "assistant",
        "Предлагаю такой план на три дня в Казани: первый день — Кремль, мечеть Кул Шариф и улица Баумана, второй — остров-град Свияжск и ужин с татарской кухней, третий — Старо-Татарская слобода и набережная Казанки. {X}",
        "Поскольку вы говорили, что бабушке категорически нельзя подниматься по лестницам, я убрал смотровую площадку и выбрал рестораны без ступенек на входе.",
        "Раз вы предпочитаете спокойный темп, я оставил вечера свободными.",
    ),
    (
        "travel",
        "user",
        "Думаем про Грузию в сентябре: Тбилиси пять дней, потом Казбеги, Сигнахи и, может быть, Батуми. Хотим попробовать вино в Кахетии и хинкали везде, где только можно. {X} Как лучше построить маршрут и стоит ли брать машину?",
        "Важно: у меня нет прав, а муж после операции на глазах ещё полгода не может садиться за руль, так что только трансферы и общественный транспорт.",
        "Мы не очень любим долгие переезды, поэтому если можно их сократить — будет здорово.",
    ),
    (
        "food",
        "user",
        "В субботу у нас новоселье, придёт человек пятнадцать. Хочу сделать закуски, пару салатов, что-то горячее в духовке и торт. Готовить буду в пятницу вечером и в субботу утром. {X} Поможете с меню и списком продуктов?",
        "У двоих гостей целиакия, поэтому всё должно быть строго без глютена, даже соусы и панировка.",
        "Пара гостей старается есть поменьше мучного, так что хорошо бы не только бутерброды.",
    ),
    (
        "food",
        "user",
        "короче хочу наконец питаться нормально, работаю из дома, готовить могу минут 30 в день, в выходные побольше. люблю гречку, курицу, овощи, творог, рыбу ем редко. {X} набросай меню на неделю",
        "у меня диабет второго типа, врач сказал углеводов не больше 130 г в день, это обязательно",
        "стараюсь есть поменьше сладкого, но без фанатизма",
    ),
    (
        "food",
        "assistant",
        "Вот меню на неделю: понедельник — тыквенный суп и запечённая курица, вторник — паста с овощами, среда — плов, четверг — рыбные котлеты с пюре, пятница — домашняя пицца. На каждый ужин уходит не больше 40 минут, порции на четверых. {X}",
        "Так как у вашего сына аллергия на коровий белок, я везде заменил молоко и сыр на безмолочные аналоги и отметил, где проверять состав хлеба.",
        "Острого почти нет, ведь вы писали, что дети его не очень любят.",
    ),
    (
        "food",
        "user",
        "Делаем поминальный обед на 40 человек в кафе, кафе готовит основное, а выпечку и кутью мы приносим сами. Подскажите, сколько всего нужно и что обычно подают? {X}",
        "Сейчас Великий пост, и семья его строго соблюдает, поэтому никакого мяса, молочного и яиц быть не должно.",
        "Многие родственники не едят жирное, так что лучше что-то полегче.",
    ),
    (
        "health",
        "user",
        "Хочу начать ходить в бассейн и зал, раньше занимался лет пять назад. Сейчас вес 96 кг при росте 182, сидячая работа. Могу тренироваться три-четыре раза в неделю по часу. {X} Распишите программу на первые два месяца?",
        "После грыжи поясничного отдела врач запретил осевую нагрузку на позвоночник, то есть никаких приседаний со штангой и становой тяги.",
        "Спина иногда побаливает после работы, так что не хотелось бы сразу больших весов.",
    ),
    (
        "health",
        "user",
        "маме 68, у неё давление, ходит с палочкой, хотим отвезти её в санаторий в Кисловодск на 14 дней в октябре. там нарзанные ванны, терренкуры, процедуры всякие {X} на что обратить внимание при выборе?",
        "у неё кардиостимулятор, ей противопоказаны электропроцедуры и магнитотерапия, это прямо в выписке написано",
        "она не любит большие шумные корпуса, лучше что-то поспокойнее",
    ),
    (
        "health",
        "assistant",
        "Для восстановления после ОРВИ советую первые две недели ограничиться прогулками по 30–40 минут, затем добавить лёгкую гимнастику, пить не меньше двух литров жидкости в день и ложиться до 23:00. {X}",
        "Поскольку вы на 20-й неделе беременности, никакие препараты из аптеки без согласования с вашим гинекологом принимать нельзя, даже витаминные комплексы.",
        "Раз вы предпочитаете заниматься дома, все упражнения можно делать на коврике.",
    ),
    (
        "health",
        "user",
        "Ребёнку 3 года, идём в садик с сентября. Прививки по календарю почти все есть, осталась одна ревакцинация. Хотелось бы заранее понять, как подготовить к адаптации и что купить. {X}",
        "У него тяжёлая аллергия на яйца с анафилаксией, в саду обязательно должны это учитывать, у нас всегда с собой шприц-ручка.",
        "Он немного капризничает с едой, не всё ест из того, что дают.",
    ),
    (
        "finance",
        "user",
        "Хотим с женой взять ипотеку на двушку в Екатеринбурге, квартиры в нужном районе стоят около 7,5 млн, первоначальный взнос есть 2 млн, общий доход примерно 180 тысяч в месяц. {X} Какие программы сейчас есть и что выгоднее?",
        "Ежемесячный платёж не может быть больше 60 тысяч, иначе мы просто не вытянем, это жёсткий потолок.",
        "Хотелось бы платёж в районе 60 тысяч, но если будет немного больше — переживём.",
    ),
    (
        "finance",
        "user",
        "Я ИП на упрощёнке 6%, в этом году оборот около 4 млн, работаю один, клиенты и физлица, и компании. Думаю, переходить ли на АУСН или оставаться как есть. {X} Что посоветуете?",
        "Декларацию за прошлый год я обязан подать до 25 апреля, в прошлый раз уже был штраф за просрочку, второй раз нельзя.",
        "Хотелось бы разобраться до весны, но сроки не горят.",
    ),
    (
        "finance",
        "assistant",
        "Предлагаю распределять 50 тысяч свободных денег так: 20 тысяч на подушку безопасности, пока не наберётся шесть месяцев расходов, 15 тысяч в индексный фонд на Мосбиржу, 10 тысяч на досрочное погашение кредита и 5 тысяч на отпуск. {X}",
        "Учитывая, что вам как госслужащему запрещено держать иностранные ценные бумаги, я оставил только российские инструменты.",
        "Я чуть сдвинул акцент в сторону погашения кредита, раз вам так спокойнее.",
    ),
    (
        "law",
        "user",
        "Сдаю квартиру в Москве, жильцы живут уже два года, договор на 11 месяцев, каждый раз продлеваем. Сейчас хочу поднять аренду с 55 до 65 тысяч и переоформить договор. {X} Как это правильно сделать?",
        "По условиям действующего договора я не имею права менять цену раньше 1 сентября, это прописано отдельным пунктом.",
        "Хотелось бы сделать всё мягко, чтобы жильцы не съехали.",
    ),
    (
        "law",
        "assistant",
        "Порядок действий при возврате некачественного товара такой: подайте письменную претензию продавцу в двух экземплярах, на втором попросите отметку о получении. Продавец обязан ответить в течение 10 дней. Если откажет — обращайтесь в Роспотребнадзор или в суд. {X}",
        "Поскольку вы говорили, что гарантийный срок заканчивается 15-го числа, претензию нужно подать строго до этой даты, иначе права на возврат по гарантии не будет.",
        "Раз вы хотите обойтись без суда, начните с претензии и звонка на горячую линию.",
    ),
    (
        "law",
        "user",
        "Открываем с другом небольшую пекарню, хотим оформить ООО на двоих, доли 50 на 50. Будем продавать выпечку на месте и через доставку, возможно, кофе навынос. {X} Какие документы и разрешения нужны?",
        "Сразу скажу: алкоголь продавать мы не будем и не можем, помещение в 80 метрах от школы.",
        "В идеале хотелось бы открыться к осени, но не критично.",
    ),
    (
        "software",
        "user",
        "Переписываем мобильное приложение доставки с нативного на Flutter. Сейчас около 30 экранов, 15 тысяч активных пользователей, бэкенд на Go. Команда — три мобильщика. {X} Как лучше спланировать переход?",
        "Заказчик требует, чтобы новая версия вышла не позже 1 декабря, это записано в договоре со штрафами.",
        "Примерно хотим успеть к концу года, но сроки гибкие.",
    ),
    (
        "software",
        "user",
        "нужна помощь с архитектурой: сервис загрузки документов, пользователи грузят сканы паспортов и договоров, дальше OCR, проверка и выдача результата в личном кабинете. нагрузка пока небольшая, тысяча файлов в день {X}",
        "по 152-ФЗ персональные данные должны храниться только на серверах в России, зарубежные облака использовать нельзя",
        "хотелось бы обойтись без сложной инфраструктуры на первом этапе",
    ),
    (
        "software",
        "assistant",
        "Для миграции на PostgreSQL 16 предлагаю: поднять реплику на новой версии через логическую репликацию, прогнать нагрузочные тесты на копии прода, переключить чтение, затем запись, и держать старый кластер ещё неделю на случай отката. {X}",
        "Раз по договору с банком простой не может превышать 5 минут в месяц, я запланировал переключение записи в окно с минимальной нагрузкой и заранее отрепетировал откат.",
        "Раз небольшое окно обслуживания вас устраивает, можно сделать переключение ночью в выходные.",
    ),
    (
        "business",
        "user",
        "Составляю бизнес-план кофейни у метро: аренда 180 тысяч в месяц, площадь 45 метров, оборудование примерно на 2,5 млн, в штате четыре бариста. Средний чек рассчитываем около 350 рублей. {X} Помогите посчитать окупаемость.",
        "Инвестор дал понять, что больше 6 млн вложений не будет ни при каком раскладе, план должен в это уложиться.",
        "Инвестор говорил о сумме около 6 млн, возможно, чуть больше, если план убедит.",
    ),
    (
        "business",
        "assistant",
        "План запуска интернет-магазина на ближайший квартал: в первый месяц — сайт на готовой платформе и 50 позиций, во второй — выход на Wildberries и Ozon, в третий — контекстная реклама с бюджетом 80 тысяч и email-рассылка. Точка безубыточности — примерно восьмой месяц. {X}",
        "Поскольку вы сказали, что маркетинговый бюджет жёстко ограничен 100 тысячами на квартал, я не стал включать блогеров.",
        "Раз бюджет у вас гибкий, можно позже добавить рекламу у блогеров.",
    ),
    (
        "events",
        "user",
        "Организую корпоратив на 60 человек в конце декабря: банкетный зал, ведущий, диджей, небольшая программа с награждением лучших сотрудников. Начало в 19:00. {X} Подскажите, как составить программу вечера?",
        "Руководство категорически запретило алкоголь на мероприятии после прошлогоднего инцидента, так что бар только безалкогольный.",
        "Хотелось бы, чтобы всё было не слишком официально.",
    ),
    (
        "events",
        "user",
        "Свадьба в августе, 80 гостей, загородный комплекс под Подмосковьем, выездная регистрация в 16:00, потом банкет до ночи. Ещё нужен фотограф и, может, салют. {X} Составьте тайминг дня?",
        "Площадка разрешает музыку только до 23:00, а фейерверки и открытый огонь там запрещены полностью.",
        "Мы бы хотели, чтобы праздник длился подольше, если площадка позволит.",
    ),
    (
        "family",
        "user",
        "Мы с мужем разводимся, детям 7 и 12 лет. Договорились, что они живут со мной, а с папой видятся по выходным. Хочу заранее продумать, как им сказать и как организовать быт. {X}",
        "По решению суда отец не может забирать детей без моего письменного согласия, и в школе об этом должны знать.",
        "Хочется, чтобы всё прошло как можно мягче для младшего.",
    ),
    (
        "family",
        "assistant",
        "Чтобы подготовить дочку к появлению младшего брата, можно заранее вместе выбрать ему игрушку, читать книжки про малышей, оставить ей отдельное время с каждым из родителей и не менять резко режим. {X}",
        "Поскольку врач сказал, что вам после кесарева нельзя поднимать больше 3 кг в течение двух месяцев, договоритесь, чтобы дочку на руки брали папа или бабушка.",
        "Раз она любит рисовать, можно сделать вместе открытку для брата.",
    ),
    (
        "education",
        "user",
        "Сын в 11 классе, сдаёт ЕГЭ по профильной математике, физике и русскому. Хочет в МФТИ или Бауманку. Сейчас по пробникам около 70 по математике и 65 по физике. {X} Как распределить подготовку на оставшиеся пять месяцев?",
        "Ему нужно минимум 85 по математике, иначе на бюджет он не проходит, а на платное мы не потянем.",
        "Хотелось бы поднять баллы хотя бы до 80, но посмотрим, как пойдёт.",
    ),
    (
        "education",
        "assistant",
        "Предлагаю такой план курса по Python на восемь недель: переменные и типы, условия и циклы, функции, списки и словари, работа с файлами, основы ООП, библиотеки requests и pandas и финальный проект. На каждую неделю по три занятия по полтора часа. {X}",
        "Поскольку по правилам вашей школы ученики младше 14 лет не могут регистрироваться во внешних сервисах, все задания выполняются в локальной среде без облачных ноутбуков.",
        "Раз группа предпочитает практику, теории в каждом занятии минимум.",
    ),
]

# (domain, role, label, text)   R=RELEVANT C=CRITICAL T=TRIVIAL
SOLO_EN = [
    (
        "travel",
        "assistant",
        "R",
        "The BTS Skytrain and the MRT subway are fast, air-conditioned and cheap, 17 to 62 baht a ride; buy a Rabbit card at any BTS station so you don't queue for tickets. Grab works well for taxis, and river boats on the Chao Phraya cost about 16 baht.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "No. Cover shoulders and knees in temples, take off your shoes before entering, and don't point your feet at a Buddha image. Women shouldn't touch monks. At the Grand Palace the dress code is enforced at the gate, but you can rent a sarong there for about 200 baht.",
    ),
    (
        "travel",
        "user",
        "R",
        "Day 3: we compared 4 hotels near the river, the cheapest was 900 baht but had no pool, the Chatrium was 4,200 with a great view, and two mid-range ones around 2,000. Leaning toward one of the mid-range ones, any thoughts on Riva Surya vs Ibis Riverside?",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Tap water in Bangkok is not drinkable, so buy bottled water or refill at the blue machines for 1 baht a litre. Ice in restaurants is usually made from filtered water and is fine. There are no direct trains to the islands, you'll need a bus-and-ferry combo or a domestic flight.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Never leave bags unattended on the night train, and keep valuables in the berth with you. The sleeper from Bangkok to Chiang Mai takes about 12 to 13 hours, lower berths cost around 1,100 baht and upper around 950. Book on the SRT website 30 days ahead, the good berths sell out.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Sintra is about 40 minutes by train from Rossio station, trains run every 20 minutes and cost 2.30 euros each way. Pena Palace gets very busy after 10 am, so go early. The 434 bus loops between the sights, but there is no parking near the palace so don't drive.",
    ),
    (
        "travel",
        "user",
        "R",
        "ok so option A is the 7:05 flight via Frankfurt arriving 15:40 for 420 euros, option B is direct at 11:30 arriving 14:10 for 510, option C is the train, 9 hours, 180 euros but we could see the Alps. I kind of like C honestly, what do you think?",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Kyoto's main sights are spread out, so a mix of buses and the subway works best. A one-day bus pass was discontinued in 2023, but the subway and bus one-day pass costs 1,100 yen. Fushimi Inari is open 24 hours and has no entrance fee, so going at 7 am avoids the crowds.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Shops in most German towns close at 8 pm and are not open on Sundays, except at main train stations and airports. Museums are usually closed on Mondays. Supermarkets like Rewe and Edeka have bottle deposits of 25 cents, you get them back at the machines by the entrance.",
    ),
    (
        "travel",
        "user",
        "R",
        "We're torn between the Amalfi Coast and Puglia for the second week. Amalfi seems more spectacular but crowded and pricey, Puglia looks more relaxed with nicer beaches and trulli in Alberobello. We'd have a car either way. Which would you pick for a couple in their 30s in June?",
    ),
    (
        "food",
        "assistant",
        "R",
        "For a crispier roast potato, parboil them for 8 minutes in salted water, drain and shake them in the pot to rough up the edges, then roast at 220 degrees in hot oil for 45 to 50 minutes, turning once. Don't overcrowd the tray, they steam instead of crisping. Duck fat gives the best flavour.",
    ),
    (
        "food",
        "assistant",
        "R",
        "A classic carbonara has no cream. You need guanciale, eggs or yolks, pecorino romano, black pepper and spaghetti or rigatoni. Mix the eggs and cheese in a bowl, toss them with the hot pasta off the heat and a splash of pasta water, so the sauce thickens without scrambling.",
    ),
    (
        "food",
        "user",
        "R",
        "so I tried the sourdough again, this time 75 percent hydration, 20 percent starter, bulk ferment 5 hours at about 24 degrees, then overnight in the fridge. the crumb was better but still dense at the bottom and the ear barely opened. any idea what I'm doing wrong?",
    ),
    (
        "food",
        "assistant",
        "R",
        "Fresh herbs like basil, parsley and coriander keep longest stored like flowers in a glass of water in the fridge, loosely covered with a bag. Basil is the exception, it goes black in the cold, so leave it on the counter. Hard herbs like rosemary and thyme can be wrapped in a damp paper towel.",
    ),
    (
        "food",
        "assistant",
        "R",
        "For 25 guests at a barbecue, plan on about 200 grams of meat per adult, so roughly 5 kg in total, split between burgers, sausages and chicken thighs. Add 2 to 3 salads, 30 buns, 10 corn cobs and about 1 kg of cheese. Charcoal: two 10 kg bags for four hours of grilling.",
    ),
    (
        "food",
        "user",
        "R",
        "Thinking of trying a Georgian feast for my birthday: khachapuri, pkhali with spinach and walnuts, chicken satsivi, and lobio. I've never made any of them. Which ones can be done a day ahead and which need to be fresh? Also where do I find blue fenugreek?",
    ),
    (
        "food",
        "assistant",
        "R",
        "Raw kidney beans contain a toxin that isn't destroyed by slow cookers at low settings, so boil them hard for 10 minutes first. Canned beans are already cooked and safe. Soak dried beans for 8 to 12 hours and discard the soaking water, it reduces the compounds that cause bloating.",
    ),
    (
        "health",
        "assistant",
        "R",
        "Adults generally need 7 to 9 hours of sleep. To improve it: keep the same wake-up time every day including weekends, avoid caffeine after 2 pm, keep the bedroom cool at around 18 degrees, and don't use screens in bed. If you can't fall asleep in 20 minutes, get up and read somewhere else.",
    ),
    (
        "health",
        "assistant",
        "R",
        "Paracetamol and ibuprofen work differently, paracetamol reduces pain and fever, ibuprofen also reduces inflammation. For a healthy adult the usual maximum is 4 grams of paracetamol a day. Ibuprofen should be taken with food. This is general information, not advice for your specific situation.",
    ),
    (
        "health",
        "user",
        "R",
        "Update on the running: week 4 done, I did 3 runs of 5 km at around 6:20 per km, and the long run on Sunday was 7 km. Legs felt fine, a bit of shin tightness on Monday that went away. Should I keep the same volume next week or increase it?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Sunscreen should be SPF 30 or higher and broad-spectrum. Apply about two tablespoons for the whole body 15 minutes before going out, and reapply every two hours or after swimming. There is no such thing as a fully waterproof sunscreen, only water-resistant for 40 or 80 minutes.",
    ),
    (
        "health",
        "assistant",
        "R",
        "The flu vaccine is updated every year because the strains change, so last year's shot doesn't protect you well this season. It takes about two weeks to build immunity. Side effects are usually mild, a sore arm or low fever for a day. Pharmacies often offer it without an appointment from October.",
    ),
    (
        "health",
        "user",
        "R",
        "my blood test came back, cholesterol total 5.8, LDL 3.9, HDL 1.2, triglycerides 1.6, vitamin D a bit low at 42. the doctor said we'll recheck in 6 months and to change diet first. what kind of changes actually make a difference for LDL?",
    ),
    (
        "finance",
        "assistant",
        "R",
        "An index fund tracking the MSCI World holds around 1,500 companies across 23 developed countries, so you get broad diversification in one product. Total fees (TER) are typically 0.12 to 0.20 percent a year. It does not include emerging markets like China or India, for that you'd add a separate fund or pick an ACWI.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "The 50/30/20 rule splits take-home pay into 50 percent for needs like rent and bills, 30 percent for wants, and 20 percent for savings and debt repayment. With 3,200 a month that's 1,600, 960 and 640. It's a starting point, in expensive cities rent alone often exceeds 50 percent.",
    ),
    (
        "finance",
        "user",
        "R",
        "Here's my current situation: 12k in a savings account at 2.1 percent, 8k in a stocks and shares ISA, a credit card balance of 1,900 at 24 percent, student loan of about 40k, salary 42k. I'm 29. Where should extra money go first?",
    ),
    (
        "finance",
        "assistant",
        "R",
        "Capital gains on shares held more than a year are taxed at a lower rate in many countries, but the rules differ a lot. In Germany there is a flat 25 percent withholding tax plus solidarity surcharge, with a yearly allowance of 1,000 euros per person. There is no special rate for long-term holdings there.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "A fixed-rate mortgage keeps your payment the same for the fixed period, usually 2, 5 or 10 years, while a variable rate moves with the central bank rate. Fixed deals often have early repayment charges of 1 to 5 percent. Variable deals usually have no exit fees but your payment can rise.",
    ),
    (
        "finance",
        "user",
        "R",
        "Comparing two job offers: A is 68k base with a 10 percent bonus, 25 days holiday and a 5 percent pension match; B is 74k base, no bonus, 28 days, 3 percent pension, but fully remote so I'd save about 2,400 a year on commuting. Which is better on paper?",
    ),
    (
        "law",
        "assistant",
        "R",
        "Under GDPR, a data subject access request must be answered within one month, which can be extended by two more months for complex requests. You usually can't charge a fee. You need to provide a copy of the personal data, the purposes of processing, who it was shared with and how long it will be kept.",
    ),
    (
        "law",
        "assistant",
        "R",
        "A trademark search should come first: check the EUIPO database and the national register for identical and similar marks in your classes. An EU trademark costs 850 euros online for one class, 50 for the second and 150 for each additional one. Registration takes about four to six months if nobody objects.",
    ),
    (
        "law",
        "user",
        "R",
        "So the landlord wants to raise the rent by 15 percent from March. The lease started two years ago, it's a periodic tenancy now, I pay 1,100 a month. Flats nearby go for about 1,200 to 1,300. Is 15 percent even allowed, and what are my options if I want to negotiate?",
    ),
    (
        "law",
        "assistant",
        "R",
        "In most EU countries you have a 14-day right of withdrawal for online purchases, counted from the day you receive the goods. It doesn't apply to personalised items, perishable food, or sealed hygiene products once opened. The seller must refund within 14 days of your withdrawal, including standard delivery costs.",
    ),
    (
        "law",
        "assistant",
        "R",
        "A limited company protects your personal assets from business debts in most cases, but directors can still be personally liable for fraud or wrongful trading. Setting one up in the UK costs 50 pounds online and usually takes 24 hours. You'll need a registered address, at least one director and a statement of capital.",
    ),
    (
        "software",
        "assistant",
        "R",
        "For your Postgres setup, I'd add a composite index on (venue_id, starts_at) for the bookings table since most queries filter by venue and date range. Don't index every column, each index slows down writes. Use EXPLAIN ANALYZE on the three slowest queries from pg_stat_statements to see where time actually goes.",
    ),
    (
        "software",
        "assistant",
        "R",
        "React Server Components render on the server and send serialised output to the client, so they can't use useState or useEffect. Client components are marked with 'use client' at the top. In Next.js 14 the app directory uses server components by default, the pages directory does not.",
    ),
    (
        "software",
        "user",
        "R",
        "current state of the project: auth is done with OAuth via Google and GitHub, the booking flow works end to end in staging, payments via Stripe are half done, webhooks aren't handled yet. we have about 3 weeks until the beta. what would you prioritise?",
    ),
    (
        "software",
        "assistant",
        "R",
        "Kafka retention is set per topic with retention.ms or retention.bytes. For 2 TB a day, seven days of retention needs about 14 TB per replica, so with replication factor 3 you'd need roughly 42 TB. Kafka doesn't compress by default, enabling zstd on producers usually cuts that by 60 to 80 percent for logs.",
    ),
    (
        "software",
        "assistant",
        "R",
        "There is no built-in way to roll back a migration in plain SQL scripts, so write a down migration for every up migration. Tools like Alembic, Flyway or golang-migrate track the applied versions in a table. Avoid editing a migration that's already been applied in production, add a new one instead.",
    ),
    (
        "software",
        "user",
        "R",
        "we're choosing between three options for the search feature: Postgres full text search which we already have, Meilisearch which looks simple, or Elasticsearch which the other team uses. about 2 million products, Russian and English, typo tolerance would be nice. pros and cons?",
    ),
    (
        "business",
        "assistant",
        "R",
        "For a small roastery, typical wholesale prices are 18 to 24 euros per kg for specialty coffee, while green coffee costs 7 to 11 per kg, and you lose about 15 to 18 percent of the weight in roasting. A 15 kg roaster can realistically produce 60 to 80 kg per hour, far more than you'll need in year one.",
    ),
    (
        "business",
        "user",
        "R",
        "Our SaaS numbers for Q3: MRR went from 41k to 48k, churn was 3.2 percent monthly, CAC about 620, average contract value 190 a month, payback around 4 months. We're thinking of raising prices by 20 percent for new customers. Does the data support that?",
    ),
    (
        "business",
        "assistant",
        "R",
        "A lean canvas has nine boxes: problem, customer segments, unique value proposition, solution, channels, revenue streams, cost structure, key metrics and unfair advantage. Fill in problem and customer segments first. It's not a substitute for a full business plan, but investors at pre-seed often prefer it.",
    ),
    (
        "business",
        "assistant",
        "R",
        "Most payment processors charge 1.4 to 2.9 percent plus a fixed fee per transaction. Stripe in the EU is 1.5 percent plus 25 cents for standard European cards and 3.25 percent for international ones. There are no monthly fees on the standard plan, but disputes cost 20 euros each.",
    ),
    (
        "events",
        "assistant",
        "R",
        "For a wedding of 120 guests you'll typically need 12 round tables of ten, plus a head table. Book the photographer and venue 12 to 18 months ahead, caterers 9 to 12 months, and the band at least 8 months ahead in summer. Rain plans matter for barns, most don't have enough cover for the ceremony.",
    ),
    (
        "events",
        "user",
        "R",
        "The conference venue shortlist: hotel A has a 300-seat main hall and 4 breakout rooms for 28k, the university campus is cheaper at 15k but has no catering on site, and the expo centre is 40k but includes AV and parking for 200 cars. The date is October 17. Which would you go for?",
    ),
    (
        "events",
        "assistant",
        "R",
        "The venue in Porto has no lift to the upper terrace, so guests with mobility issues would need to stay on the ground floor, which seats 60. Parking is limited to 20 spaces, but the metro stop Trindade is a 5-minute walk. Sound checks are usually allowed from 3 pm on the day.",
    ),
    (
        "events",
        "assistant",
        "R",
        "A kids party for 15 children usually runs best at two hours, with games every 15 to 20 minutes. Ideas for a dinosaur theme: a fossil dig in a sandpit, a dino egg hunt with plastic eggs, freeze dance to Jurassic Park music, and pin the tail on the T-rex. Plan food around the halfway mark.",
    ),
    (
        "family",
        "assistant",
        "R",
        "Toddlers around two years old usually need 11 to 14 hours of sleep in 24 hours, including one nap of 1 to 3 hours. A consistent bedtime routine helps: bath, pyjamas, two books, lights off. There's no need to wake them at exactly the same time every morning, but try to keep it within half an hour.",
    ),
    (
        "family",
        "user",
        "R",
        "We're planning the summer for the kids: camp in July for two weeks, about 650 each, then grandparents for a week in August, and we both have 10 days off in mid-August we'd like to use for a trip somewhere by car. The kids are 8 and 11. Any ideas within a 5-hour drive of Munich?",
    ),
    (
        "family",
        "assistant",
        "R",
        "Pocket money for an 8-year-old is commonly 2 to 5 a week. Some parents link part of it to chores, others keep it separate so the kid learns budgeting without tying money to helping at home. A clear jar for saving and a spending jar can make it visible. There is no single right amount.",
    ),
    (
        "education",
        "assistant",
        "R",
        "IELTS writing Task 2 is marked on four criteria: task response, coherence and cohesion, lexical resource and grammatical range. Each counts for 25 percent. You should write at least 250 words, anything shorter loses marks on task response. Plan for 5 minutes, write for 30, and check for 5.",
    ),
    (
        "education",
        "user",
        "R",
        "So my son's grades this term: maths 4, physics 5, chemistry 3 which is new, he used to get 4s, English 5 and history 4. His teacher says he's distracted in chemistry and chats with a friend. Should I talk to the teacher first or to him first?",
    ),
    (
        "education",
        "assistant",
        "R",
        "In the UK, university applications for most courses go through UCAS, with the main deadline at the end of January. Oxford, Cambridge and most medicine courses close on October 15. You can apply to up to five courses. Personal statements are changing in 2025 to three structured questions instead of one free essay.",
    ),
    (
        "education",
        "assistant",
        "R",
        "Spaced repetition works better than cramming: review new material after one day, then three days, a week and two weeks. Apps like Anki automate this. Don't just re-read your notes, testing yourself with flashcards or past papers is much more effective for long-term memory.",
    ),
    # CRITICAL standalone
    (
        "travel",
        "user",
        "C",
        "Sorry for the wall of text but one more thing I forgot to mention earlier and it's important: my husband has a severe shellfish allergy, like anaphylaxis-level, so any restaurant you recommend in Lisbon has to be safe for that, no shared fryers with prawns, nothing. We'll carry his EpiPen but I don't want to risk it.",
    ),
    (
        "travel",
        "user",
        "C",
        "Just to be clear about the Vietnam trip budget since we keep drifting: the total for flights, hotels and tours must not go over 3,000 dollars for the two of us, that's the absolute maximum we have. Everything else you've suggested sounds great, Hoi An especially, but please recalculate with that limit.",
    ),
    (
        "food",
        "user",
        "C",
        "Thanks for the lasagne recipe, it looks delicious and I love that it can be frozen, but I have to point out my partner is lactose intolerant and gets really ill, so the béchamel and the mozzarella need lactose-free versions or substitutes, otherwise I can't use it.",
    ),
    (
        "health",
        "user",
        "C",
        "Quick context before you suggest any cold remedies: I'm 14 weeks pregnant and my doctor told me not to take anything with pseudoephedrine or ibuprofen, and to check with her before any herbal tea. I've had a blocked nose and sore throat for four days now, mostly worse at night.",
    ),
    (
        "health",
        "assistant",
        "C",
        "Given that you're on metformin and your doctor set a target of keeping fasting glucose under 7, I'd avoid the intermittent fasting plan you mentioned unless she approves it, since long fasts can interact with your medication. The meal plan below keeps carbohydrates spread evenly across three meals and two snacks.",
    ),
    (
        "finance",
        "user",
        "C",
        "I read through the whole plan, it's very detailed, thank you. However, I forgot to tell you that as a US citizen living in France I cannot buy European ETFs because of the PFIC rules, my accountant was very firm about it. So the portfolio needs to be rebuilt with that in mind.",
    ),
    (
        "law",
        "user",
        "C",
        "Context for the contract review: we're a healthcare provider, so any vendor that touches patient records must sign a HIPAA business associate agreement before we share anything, no exceptions. The SaaS tool we're looking at seems nice, good reviews, reasonable price at 14 a seat, and an API we need.",
    ),
    (
        "software",
        "user",
        "C",
        "Before you write the migration script, heads up: the production database must never be touched directly from developer machines, all changes go through the CI pipeline with an approved merge request. Apart from that, the schema is pretty simple, users, orders and order_items, about 3 million rows total.",
    ),
    (
        "software",
        "assistant",
        "C",
        "Since you said the service must run entirely offline on the customer's air-gapped servers, I removed the calls to the external geocoding API and the Sentry integration. The rest of the design stays the same: FastAPI, Postgres, a Celery worker for PDF generation, and Nginx in front.",
    ),
    (
        "business",
        "user",
        "C",
        "The franchise deal looks promising, good location, 40 percent lower rent than the mall, the brand is well known. But the franchise agreement says we must buy all ingredients from their approved suppliers only and cannot change the menu, so please keep that in mind when you model the margins.",
    ),
    (
        "events",
        "user",
        "C",
        "the caterer sent the menu for the gala, it looks amazing, beef wellington, a risotto, lemon tart. but our CEO is a strict vegan and so are about 20 guests, so there must be a full vegan option for every course, not just a side salad, please help me write back to them about it",
    ),
    (
        "family",
        "user",
        "C",
        "My father-in-law is staying with us for the holidays. He's 81, loves board games and long walks, and he's a bit hard of hearing. Important: he has dementia and must never be left alone in the house, and the front door needs to stay locked because he's wandered off before.",
    ),
    (
        "education",
        "user",
        "C",
        "My son got into the summer coding camp, super excited, it's two weeks in July, Python and some robotics. The camp asked about medical info: he has type 1 diabetes and needs his blood sugar checked before lunch every day and must always have his insulin kit with him. How do I explain this to them?",
    ),
    # TRIVIAL long chatty
    (
        "travel",
        "user",
        "T",
        "Haha okay that's hilarious, my brother said the exact same thing about the tuk tuks last week, anyway thanks a lot, I'll think about it over the weekend and come back to you!",
    ),
    (
        "travel",
        "user",
        "T",
        "Oh wow, thank you so much, this is really way more than I expected, you're a lifesaver honestly. My partner is going to be so happy when I show her this. Okay, I'll read it properly tonight with a glass of wine.",
    ),
    (
        "food",
        "user",
        "T",
        "lol my kitchen looks like a bomb went off but it worked!! the cake actually rose this time, my kids ate half of it before dinner haha. anyway thank you thank you, you're the best",
    ),
    (
        "health",
        "user",
        "T",
        "Alright, that makes sense. I'm going to sleep on it and maybe talk to my sister tomorrow, she always has opinions about this stuff haha. Thanks for being patient with all my questions today, it's been a long day.",
    ),
    (
        "finance",
        "user",
        "T",
        "Okay I think my brain is officially full for today, that was a lot of numbers lol. Really appreciate you walking me through it though, I'll come back next week once I've had a chance to digest everything. Have a good one!",
    ),
    (
        "software",
        "user",
        "T",
        "nice, that did it, tests are green again!! spent like three hours on that yesterday, feel a bit dumb now haha. thanks man, going to grab a coffee and call it a day",
    ),
    (
        "business",
        "user",
        "T",
        "Good morning! Hope you're doing well. Sorry I disappeared for a few days, it was my daughter's birthday and then everything just got a bit crazy at work. Anyway, I'm back now, let's pick up where we left off.",
    ),
    (
        "events",
        "user",
        "T",
        "Hahaha I love it, the dinosaur cake idea is so cute, my son is going to lose his mind. Okay I'm sold, thanks a million, I'll let you know how the party goes!",
    ),
    (
        "family",
        "user",
        "T",
        "thank you, honestly it helps just to write it all down and get a calm answer, it's been a rough couple of weeks. okay, I'll try some of this and see how it goes, talk later",
    ),
    (
        "education",
        "user",
        "T",
        "Ooh okay, got it, that's super clear now. My teacher explained it for half an hour and I didn't get a word, and you did it in three sentences lol. Thanks a lot, seriously!",
    ),
    (
        "travel",
        "assistant",
        "T",
        "You're very welcome! I'm glad the itinerary helps, and I hope you and your partner have a wonderful time in Lisbon. Enjoy the pastéis de nata, and feel free to come back any time if you'd like to adjust anything.",
    ),
    (
        "food",
        "assistant",
        "T",
        "That's wonderful to hear, well done! The first cake that actually rises is always a small victory. Enjoy the rest of it with your family, and just let me know whenever you want to try something new.",
    ),
    (
        "software",
        "assistant",
        "T",
        "Great, glad it's working now! Those bugs are always the most annoying ones, don't feel bad about it, it happens to everyone. Enjoy your coffee and ping me whenever you pick the project up again.",
    ),
    (
        "family",
        "assistant",
        "T",
        "I'm really glad it helped a little. It sounds like you've been carrying a lot lately, so please be kind to yourself too. Take your time, and I'm here whenever you want to talk it through again.",
    ),
    (
        "finance",
        "assistant",
        "T",
        "No problem at all, it was a lot of information for one afternoon. Take your time to digest it, and whenever you're ready we can go through the next steps together. Have a lovely weekend!",
    ),
]

SOLO_RU = [
    (
        "travel",
        "assistant",
        "R",
        "Метро в Стамбуле удобное и недорогое: поездка по карте Istanbulkart стоит около 20 лир, карту можно купить в автомате на любой станции и пополнять наличными. Паромы через Босфор ходят каждые 15–20 минут и используют ту же карту. Такси лучше вызывать через приложение BiTaksi.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Нет, в мечети в шортах не пустят. Плечи и колени должны быть закрыты, женщинам нужен платок, обувь снимают у входа. Во время намаза туристов внутрь не пускают, обычно это минут 30–40. В Голубой мечети платки и накидки выдают бесплатно.",
    ),
    (
        "travel",
        "user",
        "R",
        "День второй: посмотрели три отеля в Сочи, в центре за 6 тысяч без завтрака и с видом на стройку, в Адлере за 8 с бассейном, и в Хосте за 5,5, но далеко от пляжа. Склоняемся к Адлеру, но может есть варианты получше?",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Воду из-под крана в Ереване пить можно, она из горных источников и считается одной из лучших в регионе. А вот в Тбилиси лучше брать бутилированную. Прямых поездов между Ереваном и Тбилиси летом ходит один в сутки, ночной, дорога занимает около 10 часов.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Никогда не оставляйте вещи без присмотра в плацкарте, особенно на ночь, ценное лучше держать под подушкой или в рундуке под нижней полкой. Поезд Москва — Санкт-Петербург «Красная стрела» идёт около 8 часов, купе стоит от 7 до 12 тысяч в зависимости от даты.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "До Куршской косы из Калининграда проще всего доехать на машине, дорога около часа. Въезд в национальный парк платный, примерно 300 рублей с человека. Общественный транспорт ходит редко, автобус раз в пару часов, и внутри парка магазинов почти нет, так что воду берите с собой.",
    ),
    (
        "travel",
        "user",
        "R",
        "вариант один: лететь в Мурманск 12-го, три дня в Териберке, северное сияние, китов посмотреть. вариант два: Карелия, Рускеала, Кижи, Петрозаводск, ехать на поезде. по деньгам примерно одинаково, тысяч по 70 на человека. что бы вы выбрали в конце сентября?",
    ),
    (
        "travel",
        "assistant",
        "R",
        "В Японии магазины и рестораны в основном работают без выходных, но многие музеи закрыты по понедельникам. Чаевые оставлять не принято, это может даже смутить. Наличные до сих пор нужны во многих местах, банкоматы 7-Eleven принимают российские карты UnionPay.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Во Вьетнаме сезон дождей на юге длится с мая по октябрь, но ливни обычно короткие, по часу-два после обеда. В центральной части, в Хойане и Дананге, наоборот, дожди с сентября по декабрь, а в октябре бывают тайфуны. Лучшее время для поездки по всей стране — февраль–апрель.",
    ),
    (
        "travel",
        "user",
        "R",
        "Думаем, куда поехать на майские: Калининград, Казань или Нижний. Летим из Москвы, бюджет примерно по 40 тысяч на человека, нас двое, хочется и погулять, и поесть вкусно, и чтобы не было толп. Что посоветуете?",
    ),
    (
        "food",
        "assistant",
        "R",
        "Чтобы сырники не разваливались, творог должен быть сухим и жирным, 5–9%, лишнюю влагу отожмите через марлю. На 500 г творога достаточно одного яйца, двух-трёх ложек муки и ложки сахара. Жарьте на среднем огне под крышкой по 3–4 минуты с каждой стороны.",
    ),
    (
        "food",
        "assistant",
        "R",
        "Настоящий борщ не обязательно варить на говядине, многие готовят на свинине или вообще постный. Свёклу лучше тушить отдельно с ложкой уксуса или лимонного сока, тогда она сохранит цвет. Добавляйте её в конце, за 10 минут до готовности, иначе борщ станет бурым.",
    ),
    (
        "food",
        "user",
        "R",
        "пробовала печь хлеб на закваске третий раз: 70% воды, закваски 20%, брожение 6 часов при комнатной, потом ночь в холодильнике. мякиш всё равно плотный и корка бледная. пекла в чугунной кастрюле при 230. что не так?",
    ),
    (
        "food",
        "assistant",
        "R",
        "На 15 гостей нужно примерно 3–4 кг мяса для шашлыка, если будут ещё салаты и закуски. Свинину лучше брать шейку, она не пересыхает. Мариновать в луке с солью и перцем достаточно 6–8 часов, уксус не нужен. Углей — два мешка по 3 кг.",
    ),
    (
        "food",
        "assistant",
        "R",
        "Свежую зелень дольше всего можно хранить в банке с водой в холодильнике, накрыв пакетом. Базилик исключение, от холода он чернеет, его держите на столе. Укроп и петрушку можно также завернуть во влажное бумажное полотенце и убрать в контейнер — хватит на неделю.",
    ),
    (
        "food",
        "user",
        "R",
        "Хочу на день рождения устроить грузинский стол: хачапури по-аджарски, пхали, сациви, лобио и чурчхелу. Раньше ничего из этого не готовила. Что можно сделать заранее, а что лучше в последний момент? И где купить уцхо-сунели в Москве?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Взрослым обычно нужно 7–9 часов сна. Чтобы улучшить сон, вставайте в одно и то же время даже в выходные, не пейте кофе после 14:00, держите в спальне около 18 градусов и не берите телефон в кровать. Если не засыпаете минут 20, лучше встать и почитать в другой комнате.",
    ),
    (
        "health",
        "assistant",
        "R",
        "Парацетамол и ибупрофен действуют по-разному: первый снижает температуру и боль, второй ещё и уменьшает воспаление. Ибупрофен лучше принимать после еды. Антибиотики при ОРВИ не помогают, так как это вирусная инфекция. Это общая информация, не замена консультации врача.",
    ),
    (
        "health",
        "user",
        "R",
        "сдал анализы: холестерин общий 6,1, ЛПНП 4,0, ЛПВП 1,1, глюкоза 5,4, витамин Д 18. терапевт сказал пока таблетки не нужны, сначала питание и спорт, пересдать через полгода. что реально помогает снизить ЛПНП?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Прививку от гриппа делают каждый год, потому что состав вакцины меняется под новые штаммы. Иммунитет формируется примерно за две недели, поэтому лучше привиться в сентябре–октябре. В поликлинике по ОМС это бесплатно, в частных клиниках от 800 до 1500 рублей.",
    ),
    (
        "health",
        "user",
        "R",
        "Отчёт по бегу: четвёртая неделя позади, три пробежки по 5 км в темпе около 6:30 и длинная в воскресенье на 8 км. Ноги в целом нормально, немного тянуло икры в понедельник. Оставить объём или уже добавлять?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Солнцезащитный крем нужен с SPF не ниже 30 и защитой от UVA и UVB. На всё тело уходит около двух столовых ложек, наносить за 15 минут до выхода и обновлять каждые два часа и после купания. Полностью водостойких кремов не бывает, только водоустойчивые на 40 или 80 минут.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "Налоговый вычет за лечение можно получить до 15% от расходов, но сумма расходов ограничена 150 тысячами в год, то есть вернуть можно до 22 500 рублей. Для дорогостоящего лечения лимита нет. Подать декларацию 3-НДФЛ можно в течение трёх лет после года, в котором вы оплатили лечение.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "Индексный фонд на Мосбиржу включает около 40 крупнейших компаний, так что в одной бумаге вы получаете неплохую диверсификацию по российскому рынку. Комиссия управляющего обычно от 0,5 до 1% в год. При этом дивиденды часть фондов реинвестирует, а часть выплачивает, смотрите условия.",
    ),
    (
        "finance",
        "user",
        "R",
        "Моя ситуация: на вкладе 400 тысяч под 16%, на ИИС 150 тысяч, кредитка с долгом 60 тысяч под 35%, ипотека осталась 2,8 млн под 7,5%. Зарплата 140 на руки. Куда лучше направлять свободные деньги в первую очередь?",
    ),
    (
        "finance",
        "assistant",
        "R",
        "ИИС третьего типа появился с 2024 года: минимальный срок владения сейчас пять лет и постепенно вырастет до десяти. Вычет на взносы — до 52 тысяч в год, плюс освобождение дохода от налога в пределах 30 млн. Досрочно закрыть счёт можно, но тогда вычеты придётся вернуть.",
    ),
    (
        "finance",
        "user",
        "R",
        "Сравниваю два оффера: первый — 220 тысяч оклад, годовой бонус до 20%, ДМС и офис у метро; второй — 250 тысяч, без бонуса, полная удалёнка, ДМС нет. Мне 31, детей пока нет. Что выгоднее, если считать честно?",
    ),
    (
        "finance",
        "assistant",
        "R",
        "Фиксированная ставка по ипотеке не меняется весь срок, а плавающая привязана к ключевой ставке ЦБ и может вырасти. Сейчас большинство банков дают фиксированную. Досрочное погашение по закону можно делать без штрафов, достаточно предупредить банк за 30 дней или раньше, если позволяет договор.",
    ),
    (
        "law",
        "assistant",
        "R",
        "По закону о защите прав потребителей товар надлежащего качества можно вернуть в течение 14 дней, если он не был в употреблении и сохранён товарный вид. Это не распространяется на технически сложные товары, бельё, лекарства и ряд других позиций из перечня правительства. Чек не обязателен, можно свидетельские показания.",
    ),
    (
        "law",
        "assistant",
        "R",
        "Регистрация товарного знака в Роспатенте занимает в среднем 6–8 месяцев, при ускоренной экспертизе — около двух. Госпошлина за один класс МКТУ с учётом подачи и регистрации — примерно 30–40 тысяч рублей. Сначала лучше сделать поиск по базе, чтобы не получить отказ из-за похожего знака.",
    ),
    (
        "law",
        "user",
        "R",
        "Работодатель предлагает уволиться по соглашению сторон и выплатить два оклада. Я работаю там четыре года, оклад 120 тысяч, отпуск не отгулян 18 дней. Стоит ли соглашаться и на что обратить внимание в соглашении?",
    ),
    (
        "law",
        "assistant",
        "R",
        "ООО можно зарегистрировать онлайн через Госуслуги или сайт ФНС, госпошлины при электронной подаче нет. Минимальный уставный капитал — 10 тысяч рублей. Регистрация занимает три рабочих дня. Юридический адрес нужен обязательно, можно использовать квартиру одного из учредителей с его согласия.",
    ),
    (
        "law",
        "assistant",
        "R",
        "Для договора аренды на срок меньше года государственная регистрация не нужна. Если договор заключён на год и больше, его нужно регистрировать в Росреестре. Налог с дохода от аренды физлицо платит 13%, а самозанятый — 4% при сдаче физлицам, но подавать сведения нужно в любом случае.",
    ),
    (
        "software",
        "assistant",
        "R",
        "Для таблицы заказов я бы добавил составной индекс по (user_id, created_at), потому что большинство запросов фильтруют по пользователю и периоду. Не стоит индексировать всё подряд, каждый индекс замедляет вставку. Начните с EXPLAIN ANALYZE для трёх самых медленных запросов из pg_stat_statements.",
    ),
    (
        "software",
        "user",
        "R",
        "текущий статус: авторизация через VK и Яндекс готова, каталог и корзина работают на стейдже, оплата через ЮKassa наполовину, вебхуки ещё не обрабатываем. до беты три недели. что бы вы сделали в первую очередь?",
    ),
    (
        "software",
        "assistant",
        "R",
        "В Go горутины дешёвые, но не бесплатные: каждая начинается с 2–8 КБ стека. Запуск миллиона горутин возможен, но если каждая держит соединение, упрётесь в лимиты файловых дескрипторов. Для пула воркеров удобно использовать errgroup с SetLimit, он появился в golang.org/x/sync.",
    ),
    (
        "software",
        "assistant",
        "R",
        "Нет, Flutter не компилирует в нативные виджеты, он рисует интерфейс сам через движок Impeller. Поэтому внешний вид одинаков на iOS и Android, но системные элементы приходится имитировать. Размер минимального приложения — около 5–7 МБ. Горячая перезагрузка работает только в режиме отладки.",
    ),
    (
        "software",
        "user",
        "R",
        "выбираем поиск для каталога: полнотекстовый поиск в Postgres, который уже есть, Meilisearch или Elasticsearch, как у соседней команды. товаров около 2 млн, русский и английский, опечатки хорошо бы учитывать. какие плюсы и минусы?",
    ),
    (
        "software",
        "assistant",
        "R",
        "Миграции лучше делать обратимыми: на каждую up пишите down. Инструменты вроде goose, Alembic или Flyway хранят применённые версии в отдельной таблице. Не редактируйте миграцию, которая уже прошла на проде, создавайте новую. И не смешивайте изменение схемы и перенос данных в одной миграции.",
    ),
    (
        "business",
        "assistant",
        "R",
        "Для небольшой кофейни типичная себестоимость чашки капучино — 50–70 рублей при цене 250–300. Основные расходы — аренда, зарплаты и зерно. Кофейни у метро окупаются в среднем за 12–18 месяцев, но первые три месяца обычно уходят в минус, пока набирается постоянная аудитория.",
    ),
    (
        "business",
        "user",
        "R",
        "Цифры за квартал: выручка выросла с 3,2 до 3,9 млн, отток клиентов 4% в месяц, стоимость привлечения около 2100 рублей, средний чек 1800. Думаем поднять цены на 15% для новых клиентов. Данные это подтверждают?",
    ),
    (
        "business",
        "assistant",
        "R",
        "Комиссия маркетплейсов зависит от категории: на Wildberries для одежды около 17–25%, на Ozon — от 8 до 20% плюс логистика. Продавцу на упрощёнке нужно учитывать, что налог платится со всей суммы, которую перечисляет маркетплейс, а не только с прибыли. Хранение на складе тоже платное.",
    ),
    (
        "business",
        "assistant",
        "R",
        "Lean canvas состоит из девяти блоков: проблема, сегменты клиентов, уникальное ценностное предложение, решение, каналы, потоки доходов, структура затрат, ключевые метрики и скрытое преимущество. Начинайте с проблемы и клиентов. Полноценный бизнес-план он не заменит, но для первой встречи с инвестором подходит.",
    ),
    (
        "events",
        "assistant",
        "R",
        "На свадьбу на 80 гостей обычно нужно 8–10 круглых столов и стол молодожёнов. Площадку и фотографа бронируют за 9–12 месяцев, ведущего — за полгода, особенно на лето. В загородных комплексах часто нет крытой зоны для церемонии, так что стоит заранее продумать запасной вариант на случай дождя.",
    ),
    (
        "events",
        "user",
        "R",
        "Шорт-лист площадок для конференции: отель в центре, зал на 250 мест и три переговорки за 900 тысяч; технопарк дешевле, 500 тысяч, но кейтеринга нет; экспоцентр — 1,4 млн, зато с техникой и парковкой. Дата — 17 октября. Какую бы вы выбрали?",
    ),
    (
        "events",
        "assistant",
        "R",
        "В лофте на Красном Октябре нет лифта на второй этаж, поэтому гостям с коляской или палочкой будет удобнее на первом, там помещается около 50 человек. Парковка платная и маленькая, но до метро «Кропоткинская» десять минут пешком. Саундчек обычно разрешают с 15:00.",
    ),
    (
        "events",
        "assistant",
        "R",
        "Детский праздник на 12–15 детей лучше держать в пределах двух часов, меняя активность каждые 15–20 минут. Для пиратской темы подойдут поиск сокровищ по карте, перетягивание каната, «морская фигура» под музыку и изготовление подзорных труб из картона. Еду лучше подавать ближе к середине.",
    ),
    (
        "family",
        "assistant",
        "R",
        "Детям около двух лет нужно 11–14 часов сна в сутки, включая дневной сон на 1–3 часа. Помогает постоянный ритуал перед сном: ванна, пижама, две книжки, свет выключен. Будить ребёнка в одно и то же время каждое утро не обязательно, но лучше держаться в пределах получаса.",
    ),
    (
        "family",
        "user",
        "R",
        "планируем лето для детей: в июле лагерь на две смены, по 45 тысяч каждая, в августе неделя у бабушки в Воронеже, и у нас с мужем 10 дней отпуска в середине августа, хотим куда-то на машине. детям 8 и 11. есть идеи в радиусе дня езды от Москвы?",
    ),
    (
        "family",
        "assistant",
        "R",
        "Карманные деньги детям 8–9 лет обычно дают в размере 200–500 рублей в неделю. Одни родители связывают часть суммы с домашними обязанностями, другие нет, чтобы помощь по дому не превращалась в работу за деньги. Прозрачная копилка помогает ребёнку видеть, как растут накопления.",
    ),
    (
        "family",
        "assistant",
        "R",
        "Материнский капитал в 2024 году составляет около 630 тысяч на первого ребёнка и примерно 833 тысячи, если второй родился после 2020-го и на первого капитал не получали. Его можно направить на ипотеку, образование или накопительную пенсию мамы. Наличными снять нельзя, кроме ежемесячной выплаты для малоимущих семей.",
    ),
    (
        "education",
        "assistant",
        "R",
        "В ЕГЭ по профильной математике 19 заданий: 12 с кратким ответом и 7 с развёрнутым. Максимум — 100 тестовых баллов. Первая часть проверяется автоматически, вторая — экспертами. Минимальный порог для поступления в вуз — 27 баллов, но на технические специальности в сильные вузы проходной обычно от 80.",
    ),
    (
        "education",
        "user",
        "R",
        "Оценки сына за четверть: алгебра 4, геометрия 3, физика 5, химия 3, хотя раньше были четвёрки, русский 4. Учительница говорит, что на химии он отвлекается и болтает с соседом. С кем лучше поговорить сначала — с ним или с учителем?",
    ),
    (
        "education",
        "assistant",
        "R",
        "Интервальное повторение работает лучше зубрёжки: повторяйте новый материал через день, потом через три дня, неделю и две недели. Приложение Anki делает это автоматически. Просто перечитывать конспект малоэффективно, гораздо полезнее проверять себя карточками или решать прошлые варианты.",
    ),
    (
        "education",
        "assistant",
        "R",
        "Приём документов в вузы начинается 20 июня и обычно заканчивается 25 июля для тех, кто поступает только по ЕГЭ. Подать заявления можно максимум в пять вузов и на пять направлений в каждый. Через Госуслуги это делается онлайн, оригинал аттестата можно не приносить до этапа зачисления.",
    ),
    # CRITICAL standalone
    (
        "travel",
        "user",
        "C",
        "Извините, забыла сразу написать, а это важно: у мужа тяжёлая аллергия на морепродукты, вплоть до отёка Квинке, так что все рестораны в Стамбуле, которые вы советуете, должны это учитывать, никаких общих фритюров с креветками. Эпипен мы возьмём, но рисковать не хочется.",
    ),
    (
        "travel",
        "user",
        "C",
        "Ещё раз про бюджет поездки во Вьетнам, потому что мы всё время уходим в сторону: перелёты, отели и экскурсии вместе не должны превышать 250 тысяч на двоих, это абсолютный максимум. Всё остальное, что вы предложили, отлично, особенно Хойан, но пересчитайте, пожалуйста, с этим ограничением.",
    ),
    (
        "food",
        "user",
        "C",
        "Спасибо за рецепт лазаньи, выглядит вкусно и радует, что её можно заморозить, но у мужа непереносимость лактозы, ему от молочного очень плохо, поэтому бешамель и моцарелла нужны безлактозные или замены, иначе рецепт не подходит.",
    ),
    (
        "health",
        "user",
        "C",
        "Сразу контекст, прежде чем советовать что-то от простуды: я на 14-й неделе беременности, врач запретила всё с псевдоэфедрином и ибупрофеном и сказала согласовывать с ней даже травяные чаи. Четвёртый день заложен нос и болит горло, ночью хуже.",
    ),
    (
        "health",
        "assistant",
        "C",
        "Учитывая, что вы принимаете метформин и врач поставил цель держать сахар натощак ниже 7, я бы не стал переходить на интервальное голодание без его одобрения, длительные перерывы в еде могут плохо сочетаться с препаратом. В плане ниже углеводы распределены равномерно на три приёма пищи и два перекуса.",
    ),
    (
        "finance",
        "user",
        "C",
        "Прочитал весь план, очень подробно, спасибо. Но забыл сказать: я работаю в банке, и по внутренним правилам мне запрещено торговать отдельными акциями, только фонды и облигации. Так что портфель нужно пересобрать с учётом этого.",
    ),
    (
        "law",
        "user",
        "C",
        "Контекст для проверки договора: мы медицинская клиника, поэтому любой подрядчик, который получает доступ к данным пациентов, обязан подписать соглашение о конфиденциальности и обработке персональных данных до передачи чего-либо, исключений нет. Сам сервис выглядит хорошо, цена 1200 в месяц за место.",
    ),
    (
        "software",
        "user",
        "C",
        "Прежде чем писать скрипт миграции: к продовой базе нельзя подключаться напрямую с машин разработчиков, все изменения идут только через CI с одобренным merge request. В остальном схема простая: пользователи, заказы и позиции заказов, около 3 млн строк.",
    ),
    (
        "software",
        "assistant",
        "C",
        "Раз сервис должен работать полностью в закрытом контуре заказчика без доступа в интернет, я убрал вызовы внешнего геокодера и интеграцию с Sentry. Остальная архитектура без изменений: FastAPI, Postgres, воркер Celery для генерации PDF и Nginx на входе.",
    ),
    (
        "business",
        "user",
        "C",
        "Франшиза выглядит интересно: хорошее место, аренда на 40% ниже, чем в торговом центре, бренд известный. Но по договору мы обязаны закупать все продукты только у их поставщиков и не можем менять меню, учтите это, когда будете считать маржу.",
    ),
    (
        "events",
        "user",
        "C",
        "кейтеринг прислал меню на юбилей компании, всё красиво, говядина веллингтон, ризотто, лимонный тарт. но наш генеральный строгий веган и ещё человек 20 гостей тоже, так что на каждое блюдо обязательно нужна полноценная веганская замена, не просто салат. помогите написать им ответ",
    ),
    (
        "family",
        "user",
        "C",
        "Свёкор будет жить у нас на праздниках. Ему 81, любит настольные игры и долгие прогулки, немного плохо слышит. Важно: у него деменция, его нельзя оставлять дома одного ни на минуту, а входная дверь должна быть заперта, он уже один раз уходил.",
    ),
    (
        "education",
        "user",
        "C",
        "Сына взяли в летнюю школу программирования, две недели в июле, Python и немного робототехники, он в восторге. Просят медицинскую информацию: у него диабет первого типа, перед обедом обязательно нужно мерить сахар, а инсулин всегда должен быть при нём. Как им это правильно объяснить?",
    ),
    # TRIVIAL long chatty
    (
        "travel",
        "user",
        "T",
        "Ахаха, ну это вообще шикарно, мой брат на прошлой неделе то же самое говорил про местные такси, в общем, спасибо огромное, подумаю на выходных и вернусь к вам!",
    ),
    (
        "travel",
        "user",
        "T",
        "Ого, спасибо вам огромное, это даже больше, чем я ожидала, вы меня просто спасли. Муж будет в восторге, когда покажу ему. Ладно, вечером спокойно всё перечитаю за чашкой чая.",
    ),
    (
        "food",
        "user",
        "T",
        "ахах кухня выглядит как после взрыва, но получилось!! пирог наконец поднялся, дети съели половину ещё до ужина. короче спасибо спасибо, вы лучшие",
    ),
    (
        "health",
        "user",
        "T",
        "Ладно, в целом понятно. Пожалуй, пересплю с этой мыслью и завтра обсужу с сестрой, у неё всегда на всё есть мнение, хаха. Спасибо, что так терпеливо отвечали на все мои вопросы сегодня, день был длинный.",
    ),
    (
        "finance",
        "user",
        "T",
        "Так, кажется, мой мозг на сегодня официально переполнен, столько цифр, лол. Но правда спасибо, что всё так разложили по полочкам, вернусь на следующей неделе, когда переварю. Хорошего вечера!",
    ),
    (
        "software",
        "user",
        "T",
        "о, заработало, тесты снова зелёные!! вчера часа три на это убил, теперь чувствую себя немного глупо хаха. спасибо, пойду выпью кофе и на сегодня всё",
    ),
    (
        "business",
        "user",
        "T",
        "Доброе утро! Надеюсь, у вас всё хорошо. Простите, что пропала на несколько дней, был день рождения дочки, а потом на работе начался полный завал. В общем, я вернулась, давайте продолжим с того места, где остановились.",
    ),
    (
        "events",
        "user",
        "T",
        "Ахахах, обожаю, идея с пиратским тортом просто прелесть, сын будет в полном восторге. Всё, я убеждена, спасибо миллион раз, потом расскажу, как прошёл праздник!",
    ),
    (
        "family",
        "user",
        "T",
        "спасибо, честно, уже легче просто от того, что всё написала и получила спокойный ответ, последние пару недель были тяжёлые. ладно, попробую что-то из этого и посмотрю, что будет, до связи",
    ),
    (
        "education",
        "user",
        "T",
        "О, всё, теперь понятно. Учительница полчаса объясняла, и я ни слова не поняла, а тут три предложения и всё ясно, лол. Спасибо большое, серьёзно!",
    ),
    (
        "travel",
        "assistant",
        "T",
        "Пожалуйста, очень рад, что маршрут пригодился! Желаю вам с мужем отличной поездки, обязательно попробуйте местную выпечку и не стесняйтесь писать, если захочется что-то поменять в плане.",
    ),
    (
        "food",
        "assistant",
        "T",
        "Как здорово, поздравляю! Первый пирог, который наконец поднялся, — это маленькая победа. Приятного аппетита всей семье, и пишите, когда захочется попробовать что-нибудь новенькое.",
    ),
    (
        "software",
        "assistant",
        "T",
        "Отлично, рад, что всё заработало! Такие баги всегда самые вредные, не переживайте, с каждым бывает. Приятного кофе, и пишите, когда снова вернётесь к проекту.",
    ),
    (
        "family",
        "assistant",
        "T",
        "Я очень рад, что стало хоть немного легче. Похоже, на вас в последнее время навалилось многое, так что будьте к себе бережны. Не торопитесь, я здесь, если захочется ещё раз всё обсудить.",
    ),
    (
        "finance",
        "assistant",
        "T",
        "Совсем не за что, информации сегодня действительно было много. Спокойно всё обдумайте, а когда будете готовы, разберём следующие шаги вместе. Хороших выходных!",
    ),
]

# ---------------------------------------------------------------- generator
# domain -> (bodies, binding clauses, soft clauses)
FRAG_EN = {
    "travel": (
        [
            "we're looking at two weeks in Vietnam in March, starting in Hanoi, then Ha Long Bay, Hoi An and ending in Ho Chi Minh City, mostly by domestic flights and one night bus",
            "the plan is four days in Barcelona, then a train to Valencia for three days and a ferry to Mallorca for the last five, we already booked the Barcelona flat near Sant Antoni",
        ],
        [
            "my wife is seven months pregnant so no flights after week 32 and nothing more than two hours from a hospital",
            "our total budget is capped at 2,500 euros and we cannot go over it by a single euro",
        ],
        [
            "we'd like to keep it around 2,500 euros but can stretch a bit",
            "I'd prefer not to have too many early starts",
        ],
    ),
    "food": (
        [
            "I'm making a big Sunday lunch for eight, thinking roast chicken, a tray of roasted root vegetables, gravy, a green salad and an apple crumble for dessert",
            "for the office potluck next Friday I signed up for a main and a dessert, around 20 people, and I only have one evening to cook",
        ],
        [
            "my nephew has a severe peanut allergy, so absolutely no peanuts or peanut oil anywhere in the kitchen",
            "my father is on dialysis and must not have high-potassium foods like potatoes, bananas or tomatoes",
        ],
        [
            "I'm not a big fan of peanuts, so maybe skip them if you can",
            "it would be nice to keep it fairly light, not too much butter",
        ],
    ),
    "health": (
        [
            "I've started going to the gym three times a week, mostly machines and some treadmill, and I'd like a simple routine to build strength over the next two months",
            "I've been sleeping badly for about a month, waking up at 4 am, and I drink two or three coffees a day and work late on the laptop",
        ],
        [
            "I'm on blood thinners after a stroke last year, so my cardiologist said no heavy lifting over 10 kg",
            "I have epilepsy and my neurologist said I must not skip sleep or train with flashing lights",
        ],
        [
            "I'd rather keep sessions under an hour if possible",
            "I'm not really a morning person, so evenings would suit me better",
        ],
    ),
    "finance": (
        [
            "we want to start saving for our kids' education, they're 3 and 6, and we can put aside about 500 a month, currently it's all sitting in a normal current account",
            "I'm trying to plan my taxes for next year, salary of about 65k plus some freelance income from translation, maybe 12k, and a small rental flat",
        ],
        [
            "our spending is strictly limited to 500 a month, we cannot commit a cent more",
            "the tax return must be submitted by the 31st, I already paid a late penalty once",
        ],
        ["we'd ideally put around 500 a month aside, give or take", "I'd rather not take on too much risk"],
    ),
    "law": (
        [
            "we're launching a small app that lets people swap books, users create profiles, upload photos and message each other, and we plan to show ads later",
            "I'm renting out my flat for the first time, the tenant seems great, and I want a proper contract with a deposit and a clear list of rules",
        ],
        [
            "the app must not collect any data from children under 13, our lawyer said that is a hard line",
            "the deposit legally cannot exceed five weeks of rent where I live, so the contract must reflect that",
        ],
        [
            "I'd like the terms to be short and friendly rather than full of legalese",
            "ideally the contract would be flexible on pets",
        ],
    ),
    "software": (
        [
            "we're building a small internal tool for tracking equipment loans, maybe 300 users, a React frontend, Python backend and Postgres, with login via our company SSO",
            "I need to refactor a legacy PHP codebase, about 80k lines, no tests, and gradually move parts of it into a new service",
        ],
        [
            "all customer data must stay in EU data centres, that's a contractual requirement",
            "we must not break the public API, external partners depend on it and the contract forbids breaking changes",
        ],
        [
            "I'd prefer to stick with tools the team already knows",
            "it would be nice to have some tests, but it's not a must",
        ],
    ),
    "business": (
        [
            "I'm writing a plan for a small bike repair shop with a cafe corner, rent is about 1,800 a month and I'd need two mechanics plus myself",
            "we're preparing a pitch deck for a B2B scheduling tool, we have 14 paying customers and about 9k in monthly revenue",
        ],
        [
            "the total startup cost cannot exceed 60,000, that's all the loan and savings we have",
            "the investors require a signed customer contract before the deck is sent, no exceptions",
        ],
        [
            "I'm thinking of a startup budget around 60,000, though it's flexible",
            "it would be nice to keep the deck to about 12 slides",
        ],
    ),
    "events": (
        [
            "I'm organising a team offsite for 35 people in May, two days near a lake, with a workshop on the first day and hiking or kayaking on the second",
            "we're throwing a surprise 40th for my husband at a rented hall, around 60 guests, a DJ, a photo booth and a buffet",
        ],
        [
            "the hall contract says no confetti, no candles and everyone out by 11 pm, or we lose the deposit",
            "two colleagues use wheelchairs, so every venue and activity must be fully accessible",
        ],
        ["we'd like to finish around 11 but it's not strict", "I'd rather avoid anything too formal"],
    ),
    "family": (
        [
            "my parents are coming to stay for two weeks and we have a small flat, two kids and a cat, and I'm trying to plan meals, outings and where everyone sleeps",
            "we're moving to a new city in August and the kids, 5 and 9, will change schools, so I want to make the transition easier for them",
        ],
        [
            "my mother uses oxygen at night, so nobody can smoke in the flat and there can be no open flames",
            "the court order says the children cannot leave the country without both parents' written consent",
        ],
        [
            "we'd rather not spend too much on outings",
            "it would be nice if the kids could keep some of their old routines",
        ],
    ),
    "education": (
        [
            "my daughter is starting a master's in data science in autumn and wants to refresh her maths, mostly linear algebra, probability and some calculus",
            "I teach a Year 7 class of 28 and want to run a two-week project on climate change with group work and a final presentation",
        ],
        [
            "the program requires a certified B2 English result before enrolment, without it she can't start",
            "the school forbids taking students off site without signed parental consent forms for every child",
        ],
        ["she'd prefer free resources if possible", "I'd like to keep homework light"],
    ),
}
FRAG_RU = {
    "travel": (
        [
            "планируем две недели во Вьетнаме в марте: Ханой, бухта Халонг, Хойан и в конце Хошимин, в основном внутренними перелётами и один ночной автобус",
            "план такой: четыре дня в Питере, потом «Ласточкой» в Псков на два дня и оттуда в Великий Новгород, жильё в Питере уже забронировали на Петроградке",
        ],
        [
            "жена на седьмом месяце, поэтому никаких перелётов после 32-й недели и не дальше двух часов от больницы",
            "бюджет жёстко ограничен 200 тысячами, и выйти за него мы не можем ни на рубль",
        ],
        ["хотелось бы уложиться примерно в 200 тысяч, но можно чуть больше", "лучше бы без слишком ранних подъёмов"],
    ),
    "food": (
        [
            "в воскресенье собираю семейный обед на восемь человек, думаю запечь курицу, овощи, сделать соус, салат и яблочный крамбл на десерт",
            "на офисный праздник в пятницу я записалась на горячее и десерт, человек 20, а готовить могу только один вечер",
        ],
        [
            "у племянника тяжёлая аллергия на арахис, поэтому никакого арахиса и арахисового масла даже близко",
            "отцу на диализе нельзя продукты с высоким калием, то есть картошку, бананы и помидоры",
        ],
        ["я не очень люблю арахис, так что если можно — без него", "хорошо бы что-то не слишком жирное"],
    ),
    "health": (
        [
            "начал ходить в зал три раза в неделю, в основном тренажёры и дорожка, хочу простую программу на два месяца, чтобы набрать силу",
            "уже месяц плохо сплю, просыпаюсь в четыре утра, пью два-три кофе в день и работаю за ноутбуком допоздна",
        ],
        [
            "после инсульта я на антикоагулянтах, кардиолог запретил поднимать больше 10 кг",
            "у меня эпилепсия, невролог сказал, что нельзя недосыпать и заниматься при мигающем свете",
        ],
        ["хотелось бы, чтобы тренировка была не дольше часа", "я не жаворонок, так что вечером мне удобнее"],
    ),
    "finance": (
        [
            "хотим начать копить на образование детям, им 3 и 6 лет, можем откладывать около 30 тысяч в месяц, сейчас всё лежит на обычной карте",
            "пытаюсь спланировать налоги на следующий год: зарплата примерно 180 тысяч, плюс фриланс с переводами, тысяч 40 в месяц, и сдаю однушку",
        ],
        [
            "откладывать можем строго не больше 30 тысяч в месяц, это предел",
            "декларацию обязательно нужно подать до 30 апреля, штраф я уже однажды платил",
        ],
        ["в идеале откладывать тысяч 30 в месяц, плюс-минус", "не хотелось бы сильно рисковать"],
    ),
    "law": (
        [
            "запускаем небольшое приложение для обмена книгами: пользователи заводят профиль, загружают фото и переписываются, потом хотим показывать рекламу",
            "впервые сдаю квартиру, жилец вроде отличный, хочу нормальный договор с залогом и понятным списком правил",
        ],
        [
            "юрист сказал, что персональные данные россиян мы обязаны хранить только на серверах в РФ, иначе блокировка",
            "по условиям ипотеки я не могу сдавать квартиру без письменного согласия банка, так что это нужно учесть",
        ],
        [
            "хотелось бы, чтобы условия были короткими и понятными, без канцелярита",
            "в идеале договор был бы гибким насчёт животных",
        ],
    ),
    "software": (
        [
            "делаем внутренний сервис учёта выдачи оборудования, пользователей человек 300, фронт на React, бэк на Python и Postgres, вход через корпоративный SSO",
            "нужно отрефакторить старый проект на PHP, около 80 тысяч строк, тестов нет, и постепенно вынести части в новый сервис",
        ],
        [
            "все данные клиентов обязаны оставаться в российских дата-центрах, это требование договора",
            "публичное API ломать нельзя ни в коем случае, на него завязаны партнёры, и в договоре это прописано",
        ],
        ["хотелось бы обойтись инструментами, которые команда уже знает", "тесты было бы неплохо, но не обязательно"],
    ),
    "business": (
        [
            "пишу план для небольшой веломастерской с кофейным уголком, аренда около 120 тысяч в месяц, нужны два мастера плюс я",
            "готовим презентацию для инвесторов по B2B-сервису записи, у нас 14 платящих клиентов и около 700 тысяч выручки в месяц",
        ],
        [
            "стартовые вложения не могут превышать 4 млн, больше у нас нет ни кредитных, ни своих",
            "инвестор требует подписанный договор с клиентом до отправки презентации, без исключений",
        ],
        ["думаю уложиться миллиона в 4, но это не жёстко", "хорошо бы уложиться слайдов в 12"],
    ),
    "events": (
        [
            "организую выезд команды на 35 человек в мае, два дня на озере, в первый день воркшоп, во второй поход или байдарки",
            "готовим мужу сюрприз на 40-летие в арендованном зале, около 60 гостей, диджей, фотобудка и фуршет",
        ],
        [
            "по договору аренды зала нельзя конфетти и свечи, а всех нужно вывести до 23:00, иначе залог не вернут",
            "двое коллег передвигаются на колясках, так что и площадка, и все активности обязательно должны быть доступны для них",
        ],
        ["хотелось бы закончить около 23:00, но это не строго", "не хочется ничего слишком официального"],
    ),
    "family": (
        [
            "родители приезжают к нам на две недели, квартира маленькая, двое детей и кот, пытаюсь продумать питание, прогулки и кто где спит",
            "в августе переезжаем в другой город, дети 5 и 9 лет пойдут в новые садик и школу, хочу облегчить им переход",
        ],
        [
            "мама по ночам на кислороде, поэтому в квартире никто не курит и никакого открытого огня",
            "по решению суда детей нельзя вывозить за границу без письменного согласия обоих родителей",
        ],
        ["не хотелось бы сильно тратиться на развлечения", "было бы здорово сохранить детям часть старых привычек"],
    ),
    "education": (
        [
            "дочь осенью идёт в магистратуру по анализу данных и хочет подтянуть математику: линейную алгебру, теорию вероятностей и немного матанализа",
            "веду седьмой класс, 28 человек, хочу провести двухнедельный проект про изменение климата с работой в группах и защитой в конце",
        ],
        [
            "для зачисления программа требует сертификат по английскому не ниже B2, без него её не возьмут",
            "школа запрещает выводить детей за пределы здания без подписанного согласия родителей на каждого",
        ],
        ["ей бы хотелось бесплатные материалы, если можно", "хотелось бы не перегружать детей домашкой"],
    ),
}
OPEN = {
    "en": [
        "Hi again!",
        "Okay, so,",
        "Hey, quick one but it got long:",
        "Good morning,",
        "Sorry for the long message,",
        "so basically",
        "Right, next topic:",
        "Hello there, hope you're well.",
    ],
    "ru": [
        "Привет ещё раз!",
        "Так, значит,",
        "Слушайте, вопрос вроде короткий, но получилось длинно:",
        "Доброе утро,",
        "Простите за длинное сообщение,",
        "короче",
        "Так, следующая тема:",
        "Здравствуйте, надеюсь, у вас всё хорошо.",
    ],
}
MID = {
    "en": ["Also, {c}.", "Oh and by the way, {c}.", "One thing to keep in mind: {c}.", "And just so you know, {c}."],
    "ru": ["И ещё: {c}.", "Кстати, {c}.", "Важный момент: {c}.", "И чтобы вы знали, {c}."],
}
CLOSE = {
    "en": [
        "What would you suggest?",
        "Can you put together a plan?",
        "Any ideas are welcome, thanks!",
        "Where do I even start?",
    ],
    "ru": ["Что посоветуете?", "Сможете составить план?", "Буду рада любым идеям, спасибо!", "С чего вообще начать?"],
}
CHAT = {
    "en": [
        "haha my partner keeps saying I overthink everything and honestly they're probably right",
        "the weather here has been awful all week so I've been stuck inside on my laptop",
        "I just got back from my cousin's wedding and I'm still half asleep lol",
        "my cat just walked across the keyboard so sorry if there are typos",
        "it's been such a crazy week at work, I barely had time to breathe",
    ],
    "ru": [
        "ахах, муж говорит, что я всё слишком продумываю, и, честно, он, наверное, прав",
        "погода тут всю неделю ужасная, так что я сижу дома с ноутбуком",
        "только вернулась со свадьбы двоюродной сестры и ещё наполовину сплю, лол",
        "кот прошёлся по клавиатуре, так что простите за опечатки",
        "неделя на работе была сумасшедшая, вздохнуть некогда было",
    ],
}
THANKS = {
    "en": [
        "Anyway, thanks so much for all your help, I really appreciate it, talk soon!",
        "Anyway, no questions for now, just wanted to say thank you, you've been super helpful!",
        "So yeah, all good, thanks again and have a lovely evening!",
        "Okay that's all, just wanted to say hi and thanks for yesterday, you're great.",
    ],
    "ru": [
        "В общем, огромное спасибо за помощь, очень ценю, до связи!",
        "В общем, вопросов пока нет, просто хотела сказать спасибо, вы очень помогли!",
        "Так что всё хорошо, ещё раз спасибо и хорошего вечера!",
        "Вот и всё, просто хотела поздороваться и сказать спасибо за вчера, вы чудо.",
    ],
}


def cap(s):
    return s[0].upper() + s[1:]


def generate(lang, frags, n_crit, n_rel, n_triv, rng):
    rows = []
    doms = sorted(frags)
    for i in range(n_crit):
        d = doms[i % len(doms)]
        bodies, crit, _ = frags[d]
        body, c = rng.choice(bodies), rng.choice(crit)
        op, cl = rng.choice(OPEN[lang]), rng.choice(CLOSE[lang])
        pos = i % 3
        if pos == 0:
            text = (
                f"{op} {cap(c)}. Now the main thing: {body}. {cl}"
                if lang == "en"
                else f"{op} {c}. Теперь о главном: {body}. {cl}"
            )
        elif pos == 1:
            text = f"{op} {body}. {rng.choice(MID[lang]).format(c=c)} {cl}"
        else:
            chat = rng.choice(CHAT[lang])
            text = f"{op} {body}, {chat}. {rng.choice(MID[lang]).format(c=c)}"
        rows.append((d, "user", "CRITICAL", text, f"long-gen-{lang}-crit-{d}"))
    for i in range(n_rel):
        d = doms[i % len(doms)]
        bodies, _, soft = frags[d]
        body, s = rng.choice(bodies), rng.choice(soft)
        op, cl = rng.choice(OPEN[lang]), rng.choice(CLOSE[lang])
        if i % 2:
            text = f"{op} {body}. {cap(s)}. {cl}"
        else:
            chat = rng.choice(CHAT[lang])
            text = f"{op} {body}, {chat}. {cap(s)}, {cl[0].lower() + cl[1:]}"
        rows.append((d, "user", "RELEVANT", text, f"long-gen-{lang}-rel-{d}"))
    for i in range(n_triv):
        d = doms[i % len(doms)]
        a, b = rng.sample(CHAT[lang], 2)
        text = (
            f"{rng.choice(OPEN[lang])} {a}, and {b}. {rng.choice(THANKS[lang])}"
            if lang == "en"
            else f"{rng.choice(OPEN[lang])} {a}, а ещё {b}. {rng.choice(THANKS[lang])}"
        )
        rows.append((d, "user", "TRIVIAL", text, f"long-gen-{lang}-triv"))
    return rows


def main():
    out = []
    seen = set()

    def add(text, label, lang, domain, role, group, src):
        text = " ".join(text.split())
        if text in seen:
            return
        seen.add(text)
        out.append(
            {"text": text, "label": label, "lang": lang, "domain": domain, "role": role, "group": group, "_src": src}
        )

    L = {"C": "CRITICAL", "R": "RELEVANT", "T": "TRIVIAL"}
    for lang, pairs in (("en", PAIRS_EN), ("ru", PAIRS_RU)):
        for i, (d, role, t, c, s) in enumerate(pairs):
            g = f"long-pair-{lang}-{d}-{i:03d}"
            add(t.replace("{X}", c), "CRITICAL", lang, d, role, g, "hand")
            add(t.replace("{X}", s), "RELEVANT", lang, d, role, g, "hand")
    for lang, solos in (("en", SOLO_EN), ("ru", SOLO_RU)):
        for i, (d, role, lab, t) in enumerate(solos):
            add(t, L[lab], lang, d, role, f"long-solo-{lang}-{d}-{i:03d}", "hand")
    for lang, extra in (("en", EXTRA_EN), ("ru", EXTRA_RU)):
        for i, (d, role, lab, t) in enumerate(extra):
            add(t, L[lab], lang, d, role, f"long-extra-{lang}-{d}-{i:03d}", "hand")
    rng = random.Random(7)
    for lang, frags in (("en", FRAG_EN), ("ru", FRAG_RU)):
        for d, role, lab, text, g in generate(lang, frags, *GEN_COUNTS[lang], rng):
            add(text, lab, lang, d, role, g, "gen")

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "importance", "long_messages.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for r in out:
            r = {k: v for k, v in r.items() if k != "_src"}
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    n_hand = sum(r["_src"] == "hand" for r in out)
    print(f"wrote {len(out)} rows ({n_hand} hand-written, {len(out) - n_hand} generated) to {path}")


GEN_COUNTS = {"en": (70, 55, 55), "ru": (70, 55, 55)}
EXTRA_EN = [
    (
        "travel",
        "assistant",
        "R",
        "The Louvre is closed on Tuesdays and the Musée d'Orsay on Mondays. Tickets for the Louvre must be booked online for a time slot, around 22 euros. There is no cloakroom for large suitcases, so drop luggage at your hotel first. Wednesday and Friday evenings it stays open until 9 pm.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "There are no direct flights from Lisbon to Marrakech on Tuesdays, but Ryanair flies Monday, Thursday and Saturday for about 60 to 90 euros. The flight takes 1 hour 35 minutes. From Marrakech airport a petit taxi to the medina should cost around 70 to 100 dirhams, agree on the price first.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Don't drink the tap water in Mexico City, even locals use garrafones. Uber is cheap and safer than hailing street taxis at night. The metro costs 5 pesos a ride but gets extremely crowded at rush hour, so avoid it between 7 and 9 am with luggage.",
    ),
    (
        "travel",
        "user",
        "R",
        "ok update: we booked the ryokan in Hakone for the 9th, 38,000 yen for two with dinner and breakfast, then Kyoto from the 10th to the 14th at a small machiya near Gion. Still not sure if we should do Nara as a day trip or stay one night there?",
    ),
    (
        "food",
        "assistant",
        "R",
        "Cast iron pans shouldn't go in the dishwasher or soak in water, they'll rust. Wash them with hot water and a brush, dry on the stove for a minute, then wipe a thin layer of oil over the surface. A little soap is fine these days, modern seasoning doesn't wash off that easily.",
    ),
    (
        "food",
        "assistant",
        "R",
        "A basic vinaigrette is three parts oil to one part acid: for a salad for four, 6 tablespoons of olive oil, 2 of red wine vinegar, a teaspoon of Dijon mustard, a pinch of salt and pepper. Shake it in a jar. It keeps in the fridge for about a week, the oil may solidify but that's normal.",
    ),
    (
        "food",
        "user",
        "R",
        "thinking about the menu for the cottage weekend, 6 adults 3 kids, 2 dinners and 2 breakfasts. we have a grill and a tiny oven. I was thinking burgers night one, some kind of pasta bake night two, pancakes and eggs for breakfast. does that sound like enough?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Walking 7,000 to 8,000 steps a day is associated with most of the health benefit seen in studies, the famous 10,000 figure came from a 1960s marketing campaign. Pace matters too, brisk walking where you can talk but not sing counts as moderate exercise. Aim for 150 minutes of that a week.",
    ),
    (
        "health",
        "assistant",
        "R",
        "Magnesium supplements are generally considered safe at up to 350 mg a day from pills for adults. Magnesium citrate is better absorbed than oxide but can loosen stools. There's limited evidence it helps sleep in people who aren't deficient. Food sources include nuts, spinach, beans and whole grains.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "An emergency fund usually covers three to six months of essential expenses. Keep it somewhere instantly accessible, like a high-yield savings account, not in stocks. For your expenses of around 2,100 a month, that's 6,300 to 12,600. Don't count credit card limits as part of it.",
    ),
    (
        "finance",
        "user",
        "R",
        "quick recap of what we discussed: pay off the credit card first, that's 1,900 at 24%, then build the emergency fund up to 8k, then split between the ISA and the pension. I get paid on the 25th. should I set up standing orders or do it manually each month?",
    ),
    (
        "law",
        "assistant",
        "R",
        "In Germany the notice period for employees after probation is at least four weeks to the 15th or end of a month, and it grows for the employer with years of service. Notice must be given in writing on paper, an email or WhatsApp message is not legally valid. Many contracts set longer periods.",
    ),
    (
        "law",
        "assistant",
        "R",
        "A will doesn't need a lawyer in many countries, but it must meet formal rules. In England it must be signed in front of two independent witnesses who are not beneficiaries. Handwritten wills without witnesses are not valid there, unlike in Germany or France where a fully handwritten and signed will is accepted.",
    ),
    (
        "software",
        "assistant",
        "R",
        "Docker images based on Alpine are small, about 5 MB, but use musl instead of glibc, which can break some Python wheels and make builds slower. The slim Debian images are around 25 to 30 MB and usually cause fewer surprises. Use multi-stage builds so compilers don't end up in the final image.",
    ),
    (
        "software",
        "user",
        "R",
        "So sprint planning for next week: Masha takes the payments webhooks, Oleg finishes the admin panel filters, I'll do the email templates and the password reset flow. We have 34 story points of capacity and the backlog estimate is 41. What should we cut?",
    ),
    (
        "business",
        "assistant",
        "R",
        "For a coffee shop near a station, foot traffic peaks between 7 and 9:30 am, so most revenue comes in those hours. Many shops don't open on weekends in business districts because footfall drops by 60 to 70 percent. A loyalty card with every tenth drink free is cheap and increases repeat visits.",
    ),
    (
        "events",
        "assistant",
        "R",
        "For an outdoor event in May, rent a marquee as a backup, they cost around 800 to 1,500 for 50 people. Sunset is about 9 pm in late May, so fairy lights are worth it. Portable toilets are needed if the venue has fewer than one toilet per 25 guests. Check whether the park requires a permit.",
    ),
    (
        "family",
        "assistant",
        "R",
        "At 11, many kids are ready for a first phone, but there's no magic age. Common approaches: start with a basic phone or a smartphone with parental controls, agree on rules in writing, keep phones out of bedrooms at night, and review screen time together every month rather than only restricting it.",
    ),
    (
        "education",
        "assistant",
        "R",
        "The Cambridge B2 First exam has four papers: reading and use of English, writing, listening and speaking, and takes about 3.5 hours in total. Results come in 2 to 3 weeks for the computer-based version. The certificate doesn't expire, but many universities only accept results from the last two years.",
    ),
    (
        "education",
        "user",
        "R",
        "ok so my options for the summer are: an online Python course for 49 a month, a two-week bootcamp in the city for 900, or just grinding through free stuff like CS50 and Kaggle. I have about 15 hours a week. I want to get a junior data analyst job by next spring.",
    ),
    (
        "travel",
        "assistant",
        "C",
        "Because you told me you can only travel with your guide dog, I checked each hotel's policy: the riverside guesthouse doesn't accept dogs, so I replaced it with the Novotel, which confirmed in writing that assistance dogs are welcome. The rest of the itinerary stays the same.",
    ),
    (
        "food",
        "assistant",
        "C",
        "Since your son has a severe egg allergy, the pancakes here use a flax egg, the cake uses aquafaba, and I left out the mayonnaise-based salad entirely. Please still check labels on the bread and chocolate, many brands list may contain egg.",
    ),
    (
        "finance",
        "assistant",
        "C",
        "Given that your total budget is strictly capped at 40,000 and cannot go over, I removed the kitchen island and chose the mid-range appliances. The final estimate comes to 38,700 including a 5 percent contingency, with the flooring at 9,200 and cabinets at 14,500.",
    ),
    (
        "law",
        "assistant",
        "C",
        "Since you're on a Tier 2 work visa, you must not take any paid freelance work outside your sponsor without permission, so I left the side-business option out of the plan. The other three options, salary negotiation, a pension top-up and the ISA, are fine to pursue.",
    ),
    (
        "events",
        "assistant",
        "C",
        "Because the venue forbids amplified music after 10 pm, I moved the band's set to 7:30 to 9:45 and planned an acoustic guitar and a quiet lounge playlist for the last hour. Dinner starts at 6, speeches at 7, and the cake is cut at 9:50.",
    ),
    (
        "health",
        "user",
        "C",
        "I've read about the keto thing, seems interesting, lots of people at work are doing it and losing weight fast. But I have type 1 diabetes and my endocrinologist said I must not go below 100 g of carbs a day because of the risk of ketoacidosis, so please don't suggest anything extreme.",
    ),
    (
        "family",
        "user",
        "T",
        "Haha you would not believe the morning we had, the toddler decided socks are the enemy and the dog ate half a croissant off the table. Anyway, just wanted to say thanks for the routine tips yesterday, they actually helped a bit!",
    ),
    (
        "events",
        "user",
        "T",
        "We did it!! The party was amazing, everyone loved the photo booth and my husband genuinely had no idea, he almost cried. Just wanted to come back and say thank you for all the planning help, it made such a difference.",
    ),
    (
        "education",
        "user",
        "T",
        "Just popping in to say I passed!! Got a 7.5 overall, I still can't believe it. Thanks for all the study plans and for putting up with my panicked messages at midnight, I owe you one.",
    ),
    (
        "business",
        "assistant",
        "T",
        "Congratulations, that's fantastic news! Closing your first big client is a huge milestone, and you put a lot of work into that pitch. Enjoy the moment, and whenever you want to plan the onboarding, just drop me a message.",
    ),
]
EXTRA_RU = [
    (
        "travel",
        "assistant",
        "R",
        "Эрмитаж не работает по понедельникам, а по средам и пятницам открыт до 21:00. Билет онлайн стоит около 500 рублей, студентам бесплатно. Камеры хранения для больших чемоданов там нет, так что оставьте багаж в отеле. Очередь в кассы утром бывает до часа, лучше покупать заранее.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "Прямых рейсов из Казани в Калининград по вторникам нет, но «Победа» летает по понедельникам, четвергам и субботам, билеты около 5–8 тысяч. Полёт занимает примерно три часа. Из аэропорта Храброво до центра ходит автобус 144, дорога около 40 минут, такси — примерно 800 рублей.",
    ),
    (
        "travel",
        "assistant",
        "R",
        "В Тбилиси не стоит брать такси на улице без счётчика, лучше через Bolt или Yandex Go, так дешевле и спокойнее. Метро стоит 1 лари за поездку, карту Metromoney покупают в кассе за 2 лари. Вечером по старому городу гулять безопасно, но в серных банях стоит бронировать кабинку заранее.",
    ),
    (
        "travel",
        "user",
        "R",
        "обновление: рёкан в Хаконе забронировали на 9-е, 38 тысяч иен на двоих с ужином и завтраком, потом Киото с 10-го по 14-е, домик возле Гиона. до сих пор не решили, ехать в Нару на день или остаться там на ночь?",
    ),
    (
        "food",
        "assistant",
        "R",
        "Чугунную сковороду нельзя мыть в посудомойке и оставлять замачиваться, она заржавеет. Мойте горячей водой и щёткой, просушите минуту на плите и протрите тонким слоем масла. Немного моющего средства не страшно, современное покрытие так просто не смывается.",
    ),
    (
        "food",
        "assistant",
        "R",
        "Тесто для пельменей проще всего замешивать из 500 г муки, одного яйца, 200 мл холодной воды и щепотки соли. Дайте ему отдохнуть под плёнкой 30–40 минут, тогда оно легко раскатывается. Фарш лучше брать смешанный, свинина с говядиной, и добавить немного ледяной воды для сочности.",
    ),
    (
        "food",
        "user",
        "R",
        "думаю про меню на дачу на выходные: 6 взрослых и трое детей, два ужина и два завтрака. есть мангал и маленькая духовка. в первый вечер шашлык, во второй какая-нибудь запеканка, на завтрак блины и яичница. этого хватит?",
    ),
    (
        "health",
        "assistant",
        "R",
        "Считается, что основная польза для здоровья набирается уже при 7–8 тысячах шагов в день, а знаменитые 10 тысяч пришли из японской рекламы шагомера 1960-х. Важен и темп: быстрая ходьба, при которой можно говорить, но не петь, считается умеренной нагрузкой. Ориентир — 150 минут в неделю.",
    ),
    (
        "health",
        "assistant",
        "R",
        "Магний обычно считается безопасным в дозе до 350 мг в сутки из добавок. Цитрат усваивается лучше оксида, но может слабить. Доказательств, что он улучшает сон у людей без дефицита, мало. Из продуктов магния много в орехах, шпинате, гречке и фасоли.",
    ),
    (
        "finance",
        "assistant",
        "R",
        "Финансовая подушка обычно покрывает от трёх до шести месяцев обязательных расходов. Держать её лучше на накопительном счёте или вкладе с возможностью снятия, а не в акциях. При расходах около 90 тысяч в месяц это от 270 до 540 тысяч. Кредитный лимит по карте в подушку не входит.",
    ),
    (
        "finance",
        "user",
        "R",
        "коротко что решили: сначала гасим кредитку, там 60 тысяч под 35%, потом собираем подушку до 300 тысяч, потом делим между ИИС и вкладом. зарплата приходит 10-го и 25-го. настроить автоплатежи или переводить руками каждый раз?",
    ),
    (
        "law",
        "assistant",
        "R",
        "Работник может уволиться по собственному желанию, предупредив работодателя письменно не позднее чем за две недели. Во время испытательного срока — за три дня. По соглашению сторон можно уйти и раньше. В последний день работодатель обязан выдать трудовую книжку и полностью рассчитаться, включая компенсацию за отпуск.",
    ),
    (
        "law",
        "assistant",
        "R",
        "Завещание в России оформляется у нотариуса, пошлина около 100 рублей плюс услуги технического характера, обычно 2–3 тысячи. Рукописное завещание без нотариуса допускается только в чрезвычайных обстоятельствах и теряет силу через месяц после их окончания. Изменить или отменить завещание можно в любой момент.",
    ),
    (
        "software",
        "assistant",
        "R",
        "Образы на Alpine маленькие, около 5 МБ, но там musl вместо glibc, из-за чего некоторые Python-колёса не ставятся и сборка идёт дольше. Образы debian-slim весят 25–30 МБ и обычно ведут себя предсказуемее. Используйте multi-stage сборку, чтобы компиляторы не попадали в итоговый образ.",
    ),
    (
        "software",
        "user",
        "R",
        "планирование спринта на следующую неделю: Маша берёт вебхуки оплаты, Олег доделывает фильтры в админке, я — шаблоны писем и восстановление пароля. ёмкость команды 34 стори-поинта, а бэклог оценён в 41. что будем резать?",
    ),
    (
        "business",
        "assistant",
        "R",
        "Для кофейни у вокзала пик трафика приходится на 7:00–9:30, основная выручка именно в эти часы. В деловых районах многие точки не работают по выходным, потому что поток падает на 60–70%. Карта лояльности с каждым десятым напитком в подарок стоит недорого и заметно увеличивает повторные визиты.",
    ),
    (
        "events",
        "assistant",
        "R",
        "Для мероприятия на улице в мае стоит арендовать шатёр на случай дождя, на 50 человек это около 60–100 тысяч. Солнце в конце мая садится около 21:00, так что гирлянды пригодятся. Если туалетов меньше одного на 25 гостей, нужны биотуалеты. Уточните, нужен ли разрешительный документ для парка.",
    ),
    (
        "family",
        "assistant",
        "R",
        "В 11 лет многие дети готовы к первому смартфону, но универсального возраста нет. Обычно помогает начать с родительского контроля, письменно договориться о правилах, не брать телефон в спальню на ночь и раз в месяц вместе смотреть экранное время, а не только запрещать.",
    ),
    (
        "education",
        "assistant",
        "R",
        "ОГЭ по математике состоит из 25 заданий, на экзамен даётся 3 часа 55 минут. Для получения тройки нужно набрать минимум 8 баллов, причём не менее двух из них за геометрию. Калькулятором пользоваться нельзя, но разрешены линейка и справочные материалы, которые выдают на экзамене.",
    ),
    (
        "education",
        "user",
        "R",
        "варианты на лето: онлайн-курс по Python за 5 тысяч в месяц, двухнедельный интенсив в городе за 60 тысяч или просто самому по бесплатным материалам, Stepik и Kaggle. часов 15 в неделю есть. хочу к весне устроиться джуном-аналитиком",
    ),
    (
        "travel",
        "assistant",
        "C",
        "Поскольку вы путешествуете только с собакой-поводырём, я проверил правила всех отелей: гостевой дом у реки собак не принимает, поэтому я заменил его на «Новотель», где письменно подтвердили, что собаки-помощники допускаются. Остальной маршрут без изменений.",
    ),
    (
        "food",
        "assistant",
        "C",
        "Так как у вашего сына тяжёлая аллергия на яйца, в блинах здесь вместо яйца льняная смесь, в торте — аквафаба, а салат с майонезом я убрал совсем. Всё равно проверяйте состав хлеба и шоколада: на многих упаковках пишут «может содержать следы яиц».",
    ),
    (
        "finance",
        "assistant",
        "C",
        "Учитывая, что бюджет на ремонт жёстко ограничен 1,5 млн и превышать его нельзя, я убрал остров на кухне и выбрал технику среднего класса. Итоговая смета — 1 430 000 с резервом 5%, из них пол — 320 тысяч и кухонные шкафы — 480 тысяч.",
    ),
    (
        "law",
        "assistant",
        "C",
        "Поскольку вы иностранец с разрешением на работу у конкретного работодателя, подрабатывать на стороне без оформления вам нельзя, поэтому вариант с фрилансом я из плана убрал. Остальные три варианта — переговоры о зарплате, ИИС и вклад — можно реализовывать спокойно.",
    ),
    (
        "events",
        "assistant",
        "C",
        "Так как на площадке запрещена громкая музыка после 22:00, я перенёс выступление группы на 19:30–21:45, а на последний час запланировал акустику и спокойный плейлист. Ужин в 18:00, тосты в 19:00, торт в 21:50.",
    ),
    (
        "health",
        "user",
        "C",
        "Про кето почитала, интересно, на работе многие сидят и быстро худеют. Но у меня диабет первого типа, и эндокринолог прямо сказала, что углеводов должно быть не меньше 100 г в день из-за риска кетоацидоза, так что ничего экстремального, пожалуйста.",
    ),
    (
        "family",
        "user",
        "T",
        "Ахах, вы не поверите, какое у нас было утро: младший решил, что носки — это враги, а собака стащила со стола полкруассана. В общем, просто хотела сказать спасибо за советы по режиму, они правда немного помогли!",
    ),
    (
        "events",
        "user",
        "T",
        "У нас получилось!! Праздник прошёл шикарно, фотобудка всем понравилась, а муж вообще ни о чём не догадывался и чуть не расплакался. Просто хотела вернуться и сказать спасибо за помощь с планированием, это очень выручило.",
    ),
    (
        "education",
        "user",
        "T",
        "Забежала сказать, что сдала!! 92 балла по русскому, до сих пор не верю. Спасибо за все планы подготовки и за то, что терпели мои панические сообщения в полночь, я ваша должница.",
    ),
    (
        "business",
        "assistant",
        "T",
        "Поздравляю, это отличная новость! Первый крупный клиент — серьёзный рубеж, и вы вложили в эту презентацию много сил. Порадуйтесь моменту, а когда захотите спланировать запуск работы с ним, просто напишите.",
    ),
]

if __name__ == "__main__":
    main()
