"""Article texts of the bundled demo site (original text written for scrapy-simhash; see site/ATTRIBUTION.md)."""

from __future__ import annotations

# ruff: noqa: ISC004  (each paragraph is one string literal split over several lines)

# Each article: title, byline, section, paragraphs. The keys are the article ids used in groups.json.
ARTICLES: dict[str, dict[str, object]] = {
    # ------------------------------------------------------------------ English
    "library-hours": {
        "lang": "en",
        "title": "Central Library to open on Sundays from next month",
        "byline": "By Hannah Reyes, city reporter",
        "section": "City",
        "paragraphs": [
            "Harbor City's Central Library will open its doors on Sundays for the first time in eleven years, "
            "the city council confirmed on Tuesday after a budget review freed money for additional staff. From "
            "the first weekend of next month the building on Market Square will be open from ten in the morning "
            "until five in the afternoon, and the children's floor will run a reading hour at eleven.",
            "The decision follows a petition signed by more than four thousand residents, many of them parents "
            'and students who said that weekday opening hours clashed with school and work. "People told us they '
            'wanted a quiet, warm place to study at the weekend, and the library is the obvious answer," said '
            "councillor Maria Okafor, who chairs the culture committee. She added that the cost, roughly three "
            "hundred thousand dollars a year, would be covered by savings on the old heating system that was "
            "replaced last winter.",
            "Librarians welcomed the news but warned that the change depends on recruiting twelve part-time "
            "assistants before the opening date. The union representing library workers said it had agreed to a "
            "rota that limits each employee to two Sundays a month, and that staff working weekends would receive "
            "a small supplement. Volunteers from the Friends of the Library association will help at the "
            "information desk during the first few weeks.",
            "Not every service will be available on Sundays. The local history archive and the map room will stay "
            "closed, because they need specialist staff, and the cafe on the ground floor is still negotiating its "
            "own hours. Computers, printers, the study rooms and the lending counters will all be open, and books "
            "can still be returned around the clock through the drop box by the side entrance.",
            "The library plans to review visitor numbers after six months. If Sunday opening proves popular, the "
            "council may extend the trial to the branch libraries in Eastfield and the old harbour district, which "
            "currently close at one o'clock on Saturdays.",
        ],
    },
    "library-seeds": {
        "lang": "en",
        "title": "Library launches seed-lending cabinet for city gardeners",
        "byline": "By Hannah Reyes, city reporter",
        "section": "City",
        "paragraphs": [
            "Gardeners in Harbor City can now borrow seeds as easily as they borrow novels. The Central Library "
            "opened a seed-lending cabinet on its ground floor this week, stocked with more than sixty varieties of "
            "vegetables, herbs and wild flowers donated by local growers and the botanical society.",
            "The idea is simple: members take a few packets in spring, grow the plants, and return some seeds from "
            "their harvest in the autumn so that the collection keeps renewing itself. Each envelope carries a "
            "label with the variety, the year it was collected and tips on sowing depth and spacing. Beginners are "
            "encouraged to start with beans, lettuce and marigolds, which are forgiving and produce plenty of seed.",
            '"We lend tools, musical instruments and even fishing rods already, so seeds felt like a natural next '
            'step," said head librarian Tomasz Lindqvist. He said the project cost almost nothing, because the '
            "wooden cabinet came from an old card catalogue that had been sitting in a storeroom since the "
            "catalogue went online in the nineties.",
            "The botanical society will run free workshops on saving seeds every second Thursday evening, covering "
            "how to dry tomato seeds, why some squash varieties cross-pollinate and how to store packets away from "
            "damp and mice. Schools have already asked whether classes can visit, and the library is preparing a "
            "short guide for teachers.",
            "Organisers admit that not all borrowers will bring seeds back. They say that is fine: a seed that ends "
            "up in a balcony pot instead of the cabinet still counts as a success. Anyone who wants to donate seeds "
            "from their own garden can leave them at the lending counter in a labelled envelope, with a note of "
            "where and when the plants were grown.",
            "The cabinet is open whenever the library is, and no membership card is needed to take a packet. Staff "
            "ask only that borrowers write their name and the varieties they took in a small notebook kept on top "
            "of the cabinet.",
        ],
    },
    "garden-festival": {
        "lang": "en",
        "title": "Harvest festival fills Eastfield community garden",
        "byline": "By Daniel Osei",
        "section": "Culture",
        "paragraphs": [
            "Thousands of visitors squeezed between the raised beds of the Eastfield community garden on Saturday "
            "for its annual harvest festival, which organisers said was the busiest in the event's fifteen-year "
            "history. Stalls sold jam, honey, pickles and bread, while children queued for pumpkin carving and a "
            "tractor-trailer ride around the allotments.",
            "The garden was created on a derelict car park by a handful of neighbours who wanted somewhere to grow "
            "vegetables. It now has more than two hundred plot holders, a greenhouse heated by compost, and a "
            "waiting list that stretches to three years. The festival raises money for tools, water tanks and the "
            "free gardening classes held every weekend from April to October.",
            "This year's prize for the heaviest marrow went to retired bus driver Samuel Achebe, whose entry "
            'weighed just over thirty kilograms. "I talk to it every morning," he joked, adding that the real '
            "secret was horse manure from the riding school down the road. The prize for the best jar of chutney "
            "was shared between two sisters who had used the same family recipe but, they insisted, different "
            "apples.",
            "Local bands played on a stage built from pallets, and a tent run by the fire brigade showed families "
            "how to make a small garden safe for hedgehogs and other wildlife. Volunteers handed out cuttings of "
            "strawberry plants and mint so that visitors could start growing their own food at home.",
            "Organisers thanked the neighbours for their patience with the noise and the parking, and said any "
            "surplus produce would be given to the food bank on Mill Lane. The garden will be open to the public "
            "again for its winter solstice lantern walk in December.",
            "Next year the committee hopes to add a second stage and a covered area for the craft stalls, which "
            "were hit by a short shower in the afternoon but stayed busy until the gates closed at six.",
        ],
    },
    "tram-line": {
        "lang": "en",
        "title": "Waterfront tram line carries its first passengers",
        "byline": "By Priya Natarajan, transport correspondent",
        "section": "Transport",
        "paragraphs": [
            "The first passengers boarded Harbor City's new waterfront tram on Monday morning, ending almost a "
            "decade of planning, public consultations and disruptive roadworks along the old docks. The line runs "
            "for six kilometres from the central railway station to the ferry terminal, with eleven stops, and "
            "trams will run every seven minutes at peak times.",
            "Transport officials say the line will carry about twenty-five thousand passengers a day once it is "
            "fully established, taking pressure off the crowded number 4 and number 9 bus routes. The trams are "
            "low-floor vehicles with space for wheelchairs, prams and bicycles, and each stop has real-time "
            "information screens and step-free access.",
            "The project cost around four hundred million dollars, shared between the city, the regional "
            "government and a national infrastructure fund. It ran fourteen months late, mainly because engineers "
            "discovered the remains of a nineteenth-century wooden pier under the route near the fish market. "
            "Archaeologists recorded the timbers before they were removed, and some of them will be displayed at "
            "the maritime museum.",
            "Shop owners along Quay Street, who complained loudly during the construction, were cautiously "
            'optimistic on opening day. "For two years customers could not reach us because of the fences and the '
            'dust," said cafe owner Lena Marsh. "If the tram brings people back, we will forget the bad times '
            'quickly."',
            "Fares are the same as on city buses, and tickets can be bought with a bank card at the stops or "
            "through the transport app. For the first week, travel on the new line is free for everyone. A second "
            "phase, which would extend the line across the river to the university campus, is still waiting for "
            "approval.",
            "On the first morning, a group of retired dock workers rode the whole line together, pointing out the "
            "warehouses where they had once loaded ships and the spot where the old swing bridge used to stand.",
        ],
    },
    "winter-timetable": {
        "lang": "en",
        "title": "Tram and bus operator publishes its winter timetable",
        "byline": "By Priya Natarajan, transport correspondent",
        "section": "Transport",
        "paragraphs": [
            "Harbor City Transport has published its winter timetable, which takes effect on the first Sunday of "
            "November and will remain in place until the end of March. Most changes are small, but passengers who "
            "travel late in the evening or early on weekend mornings should check their journeys before setting "
            "out.",
            "The waterfront tram will run every ten minutes instead of every seven during the middle of the day, "
            "when demand drops after the summer tourist season. The operator says the freed vehicles will be used "
            "to strengthen services at rush hour, when trams between the station and the ferry terminal are often "
            "full. Night buses on routes N2 and N5 will run every half hour on Fridays and Saturdays until four in "
            "the morning.",
            "Several rural bus routes will lose their last evening journey because of low passenger numbers, a "
            'decision criticised by village councils in the north of the region. "Older people and teenagers rely '
            'on those buses to get home," said one councillor. The operator replied that it would offer a '
            "demand-responsive minibus that can be booked by phone or app an hour in advance.",
            "Gritting teams and snow ploughs will be on standby from mid-November. When roads are icy, some hill "
            "routes will be diverted along main roads, and real-time updates will be posted on the operator's "
            "website and at tram stops. Passengers are advised to allow extra time and to wear sensible shoes on "
            "exposed platforms.",
            "Printed timetables are available at the central station travel centre and in public libraries. The "
            "operator is also asking passengers to take part in an online survey about next year's network "
            "changes, which could include a new express bus to the airport.",
            "Holders of monthly passes do not need to do anything, as their "
            "tickets remain valid on all routes throughout the winter.",
        ],
    },
    "bakery": {
        "lang": "en",
        "title": "Family bakery on Bridge Street celebrates fifty years",
        "byline": "By Daniel Osei",
        "section": "City",
        "paragraphs": [
            "When Rosa and Giorgio Bellini opened a tiny bakery on Bridge Street in the spring of 1974, they sold "
            "only three kinds of bread and closed every afternoon so that they could sleep before the night shift. "
            "Fifty years later their grandchildren run the business, which now employs twenty people and supplies "
            "restaurants all over Harbor City.",
            "The anniversary was marked on Sunday with a street party, free slices of the bakery's famous olive "
            "loaf and a brass band that played outside the shop until the flour dust settled. Regular customers "
            "shared stories of buying birthday cakes there as children and now bringing their own children for "
            "cinnamon buns on Saturday mornings.",
            "Much has changed since the early days. The wood-fired oven was replaced by electric ovens in the "
            "nineties, the shop expanded into the former shoe repair next door, and the bakery now sells "
            "sourdough, rye and gluten-free loaves alongside the classic recipes. But some things have stayed the "
            "same: the starter culture for the house loaf is the one Rosa brought from her home village, and it "
            "has been fed every day for half a century.",
            "Running a small bakery is harder than ever, says granddaughter Chiara Bellini, who manages the shop. "
            "Energy prices and the cost of flour have risen sharply in recent years, and finding bakers willing to "
            "work at three in the morning is a constant struggle. The family has started training apprentices "
            "from the local vocational school and offers them a permanent contract after two years.",
            "Asked about the secret of the bakery's long life, Giorgio, now eighty-one, smiled and pointed to the "
            'queue at the door. "Good bread, honest prices, and you always remember the customer\'s name," he '
            "said. The bakery plans to publish a small book of family recipes later this year, with profits going "
            "to the children's hospital.",
        ],
    },
    "storm-harbour": {
        "lang": "en",
        "title": "Storm damage closes the harbour swimming area",
        "byline": "By Hannah Reyes, city reporter",
        "section": "Weather",
        "paragraphs": [
            "The popular swimming area at the south end of the harbour will stay closed for at least three weeks "
            "after Thursday night's storm tore away part of the floating pontoon and left debris scattered across "
            "the bathing zone. Lifeguards have put up barriers and warning signs, and the city is asking people "
            "not to swim there until divers have inspected the seabed.",
            "Wind gusts of more than one hundred kilometres an hour were recorded at the harbour master's office, "
            "and waves broke over the sea wall for several hours. Two small sailing boats sank at their moorings "
            "and a section of the promenade railing was bent out of shape. Nobody was injured, but the fire "
            "brigade was called out more than forty times across the city to deal with fallen trees and flooded "
            "basements.",
            "The pontoon, which is used by swimming clubs and by families on summer evenings, was installed only "
            "two years ago. Engineers will check whether its anchoring chains failed or whether it was hit by a "
            "drifting boat. Repairs are expected to cost tens of thousands of dollars, and the city hopes its "
            "insurance will cover most of the bill.",
            "Swimmers who train all year round are disappointed. The winter swimming club, which has more than "
            "three hundred members, said it would move its morning sessions to the indoor pool in Eastfield until "
            "the harbour reopens. Its chairwoman urged members not to be tempted by the calm water on sunny days, "
            "as broken timbers and metal could be hidden just below the surface.",
            "Meteorologists say that storms of this strength have become more frequent along this coast over the "
            "last twenty years. The city is preparing a plan to raise the sea wall in the most exposed places, "
            "which will be presented to residents at a public meeting next month.",
        ],
    },
    # ------------------------------------------------------------------ Chinese
    "tea": {
        "lang": "zh",
        "title": "山城茶农试种高山新茶 春茶产量增三成",
        "byline": "记者 林晓雨",
        "section": "本地",
        "paragraphs": [
            "本报讯 今年清明前后，位于城南山区的云岭村迎来了春茶采摘的高峰。村里的茶农告诉记者，三年前引进试种的高山新品种"
            "今年首次大面积采摘，鲜叶产量比去年增加了三成左右，收购价格也比普通品种高出不少。",
            "云岭村海拔在八百米以上，常年云雾缭绕，昼夜温差大，适合茶树生长。过去村民种植的多是老品种，茶叶口感偏苦，销路"
            "一直不理想。前几年，县农业技术推广站与省农科院合作，在村里建起了五十亩试验茶园，挑选了三个耐寒、抗病的新品种"
            "进行对比种植，并派技术员定期上山指导修剪、施肥和病虫害防治。",
            "茶农老周家种了六亩新茶。他说，刚开始大家心里都没底，担心新品种不适应山里的气候，投入的钱打了水漂。“头两年只"
            "长树不出茶，村里不少人说风凉话。今年一采摘，芽头又多又壮，做出来的茶汤色清亮，香气也足，收茶的客商一来就定了"
            "一大半。”说到这里，老周脸上露出了笑容。",
            "为了让茶叶卖得更好，村里还成立了茶叶专业合作社，统一采摘标准，统一加工，统一品牌。合作社负责人介绍，合作社新"
            "建了一条清洁化加工生产线，从杀青、揉捻到烘干全部在室内完成，既保证了卫生，也让茶叶品质更加稳定。今年合作社还"
            "尝试通过网络直播销售，第一场直播就卖出了两百多斤。",
            "县农业部门表示，下一步将在总结云岭村经验的基础上，在周边三个乡镇推广种植高山新茶，同时加强对茶农的技术培训，"
            "帮助更多山区群众依靠茶产业增收致富。",
        ],
    },
    "bridge": {
        "lang": "zh",
        "title": "跨江大桥下月起夜间分段限行 市民出行需提前规划",
        "byline": "记者 陈东",
        "section": "交通",
        "paragraphs": [
            "记者从市交通管理部门获悉，为配合跨江大桥主桥伸缩缝更换和桥面铺装修复工程，从下月一日起，大桥将在每天晚上十一"
            "点至次日清晨五点实行分段限行，预计持续约四十天。白天交通不受影响。",
            "跨江大桥建成通车已有二十多年，是连接江北老城区和江南新区的主要通道之一，日均车流量超过八万辆次。近年来，随着车"
            "流量不断增加，桥面出现了不同程度的车辙、坑槽，部分伸缩缝也存在破损和异响，给行车安全带来隐患。去年底的专项检"
            "测显示，大桥主体结构安全状况良好，但附属设施需要尽快维修。",
            "根据施工方案，工程分为两个阶段进行。第一阶段封闭由北向南方向的两条车道，南向北方向保持双向通行；第二阶段则反过"
            "来。限行期间，大型货车禁止上桥，需绕行上游的江湾大桥；公交夜班线路将临时调整走向，具体安排由公交公司另行公布。",
            "交警部门提醒，夜间经过施工路段的驾驶人要减速慢行，服从现场交通指挥，不要随意变道和超车。施工单位已在桥头设置了"
            "提示牌和导向标志，并安排专人值守。市民也可以通过交通广播和官方微信公众号查询实时路况，合理安排出行时间和路线。",
            "有关负责人表示，之所以选择在夜间施工，就是为了尽量减少对市民白天通勤的影响。工程完工后，大桥的行车舒适性和安全"
            "性将得到明显提升。",
            "据介绍，此次维修还将同步更换桥上的部分路灯和排水设施，并对人行道栏杆进行除锈刷漆，让大桥以更好的面貌迎接市民。",
        ],
    },
    "bridge-check": {
        "lang": "zh",
        "title": "江湾大桥完成年度体检 桥梁结构总体良好",
        "byline": "记者 陈东",
        "section": "交通",
        "paragraphs": [
            "近日，市桥梁管理中心对江湾大桥进行了为期一周的年度“体检”。检测人员借助桥梁检测车、无人机和水下机器人，对大桥"
            "的主梁、桥墩、拉索和支座等部位进行了全面检查。检测结果显示，大桥结构总体状况良好，各项指标均在正常范围之内。",
            "江湾大桥是我市第一座斜拉桥，主跨三百二十米，通车至今已有十五年。与普通道路不同，桥梁长期承受车辆荷载、风力、温"
            "度变化和江水冲刷，如果不及时发现和处理细小病害，就可能逐渐发展成大问题。因此，管理部门每年都会组织一次全面检测，"
            "每季度开展一次常规巡查。",
            "这次检测中，工作人员重点检查了斜拉索的防护套和锚具。他们乘坐吊篮升到数十米高的索塔上，逐根检查拉索表面有无破损、"
            "锈蚀。水下机器人则潜入江中，拍摄桥墩基础的影像，查看有无冲刷掏空的现象。检测还发现了少量桥面排水口堵塞和护栏"
            "油漆脱落的问题，已经安排养护单位限期处理。",
            "桥梁管理中心的工程师介绍，近年来我市逐步建立了桥梁健康监测系统，在重点桥梁上安装了上百个传感器，可以实时采集桥"
            "梁的振动、位移和应力数据，一旦出现异常就会自动报警。人工检测和自动监测相结合，让桥梁管理更加精细、更加科学。",
            "据了解，今年全市还将对二十余座中小桥梁开展专项检测，对发现问题的桥梁及时进行加固维修，确保市民出行安全。",
            "工程师表示，桥梁和人一样，定期体检才能及早发现问题，市民如果在过桥时发现异常情况，也可以拨打城市服务热线反映。",
        ],
    },
    "museum-night": {
        "lang": "zh",
        "title": "市博物馆推出夏季夜场 市民下班后也能看展",
        "byline": "记者 周敏",
        "section": "文化",
        "paragraphs": [
            "从本周五开始，市博物馆将在每周五、周六开放夜场，开放时间延长至晚上九点，最后入馆时间为八点。这是博物馆建馆以来"
            "第一次在夏季常态化开放夜场，预约方式与白天相同，市民可以通过博物馆官方网站或小程序免费预约。",
            "博物馆相关负责人介绍，近年来前来参观的观众越来越多，节假日经常一票难求。不少上班族反映，工作日白天没时间，周末"
            "人又太多，希望博物馆能延长开放时间。经过几个月的准备，博物馆增加了安保和讲解人员，调整了空调和照明系统，决定先"
            "在夏季试行夜场。",
            "夜场期间，馆内的常设展览“古城千年”和“江河文明”全部开放，临时展厅还将推出“夏夜星空”主题展，展出一批与天文历法"
            "有关的文物和古籍。每晚七点和八点，讲解员会在一楼大厅提供两场免费讲解，每场限四十人。博物馆还在中庭设置了文创市"
            "集，并邀请本地乐队进行小型演出。",
            "为了保证参观秩序，夜场每晚限流两千人。博物馆提醒观众合理安排时间，提前预约，入馆时配合安检，不要携带食品和饮料"
            "进入展厅。周边的两条公交线路也将延长末班车时间，方便观众看展后回家。",
            "许多市民对这一举措表示欢迎。一位带着孩子来参观的家长说，晚上天气凉快，一家人吃完饭来博物馆逛一逛，既能增长知识，"
            "又能放松心情，这样的夜晚很有意义。",
            "据统计，夜场开放首周的预约名额在两小时内就被约满，博物馆正在研究是否在国庆假期增加开放日期。",
        ],
    },
    "museum-silk": {
        "lang": "zh",
        "title": "市博物馆新展聚焦古代丝绸 三百余件文物首次亮相",
        "byline": "记者 周敏",
        "section": "文化",
        "paragraphs": [
            "昨天上午，“丝路锦绣——古代丝绸文物特展”在市博物馆开幕。展览汇集了来自全国十余家文博单位的三百余件丝绸文物，"
            "其中近一半是首次公开展出，展期将持续到今年十月底。",
            "展览分为“蚕桑起源”“织造技艺”“丝路往来”和“锦绣生活”四个单元，按时间顺序讲述了从新石器时代到明清时期丝绸生产和"
            "使用的历史。观众可以看到出土的古代蚕茧、纺织工具，也能近距离欣赏色彩鲜艳的织锦、刺绣和服饰。一件保存完好的唐代"
            "联珠纹锦格外引人注目，图案中的对鸟、对兽纹样带有明显的异域风格，见证了当年东西方文化的交流。",
            "由于丝绸文物十分脆弱，对光照、温度和湿度都非常敏感，展厅内的灯光被调得比较暗，展柜也采用了恒温恒湿设计。策展人"
            "介绍，部分文物展出一段时间后还要轮换下架“休息”，因此观众在不同时间前来，可能会看到不同的展品。",
            "为了让展览更加生动，博物馆在展厅中设置了一台复原的古代织机，每天下午由非遗传承人现场演示织锦技艺，观众还可以亲"
            "手体验穿梭引线。展览期间，博物馆还将举办系列讲座，邀请专家讲解丝绸考古和文物保护的故事。",
            "博物馆提醒观众，特展与常设展览一样免费开放，但需要提前预约。展厅内禁止使用闪光灯拍照，请观众文明参观，共同保护"
            "珍贵文物。",
            "策展团队花了近两年时间筹备这次展览，多次赴各地文博单位挑选展品，并与专业机构合作完成了文物的运输和布展工作。",
        ],
    },
    "canteen": {
        "lang": "zh",
        "title": "社区长者食堂开张 老人家门口吃上热乎饭",
        "byline": "记者 林晓雨",
        "section": "民生",
        "paragraphs": [
            "上周一，位于老城区和平街道的社区长者食堂正式开张营业。食堂面积约二百平方米，可同时容纳六十人就餐，主要为辖区内"
            "六十岁以上的老年人提供午餐和晚餐，行动不便的老人还可以预约送餐上门。",
            "和平街道是老城区老年人口最集中的地方，六十岁以上的居民占到常住人口的三分之一，其中不少是独居或空巢老人。街道工"
            "作人员在走访中发现，很多老人做饭不方便，常常一顿饭吃两天，营养难以保证。为此，街道联合社区和一家餐饮企业，利用"
            "闲置的社区用房改建了这家食堂。",
            "食堂每天供应两荤两素一汤，菜品每周更换，注重少油少盐、软烂易嚼。老人凭卡就餐，每餐标准价格十五元，八十岁以上老"
            "人和低保老人还能享受不同程度的补贴，最低只需付五元。开张第一周，食堂每天接待就餐老人近两百人次，送餐服务也有三"
            "十多户预约。",
            "七十八岁的王奶奶住在食堂对面的小区，她说，自从老伴去世后，自己一个人吃饭总是凑合，现在走几步路就能吃上热乎饭，"
            "还能和老邻居们聊聊天，心里也热闹了不少。食堂的志愿者还会定期为老人测量血压，讲解健康饮食知识。",
            "街道负责人表示，下一步将根据老人的意见不断改进菜品和服务，并计划在辖区另外两个社区再建两家长者食堂，让更多老人"
            "在家门口享受到便利的助餐服务。",
            "据了解，食堂还开通了线上订餐功能，在外地工作的子女可以在手机上为父母预订饭菜并代为付款，不少家属专门打来电话表示感谢。",
        ],
    },
}

# The weekly roundup changes between site editions: edition 1 is served on the demo's first run,
# edition 2 on later runs, so that the second run shows a "changed" verdict next to the unchanged pages.
ROUNDUP: dict[int, dict[str, object]] = {
    1: {
        "lang": "en",
        "title": "The week in Harbor City",
        "byline": "By the Harbor Daily desk",
        "section": "City",
        "paragraphs": [
            "It was a week of openings in Harbor City. The waterfront tram carried its first passengers on Monday, "
            "and by Wednesday the operator said more than sixty thousand free journeys had been made on the new "
            "line. Queues at the ferry terminal stop stretched around the corner on the first evening, as families "
            "took the ride simply to see the harbour lights from the top deck of the bridge section.",
            "At the council, members argued for three hours over the budget for the next financial year. The "
            "largest item, a plan to refurbish four primary schools, passed with a comfortable majority, while a "
            "proposal to raise parking charges in the old town was sent back to committee after shopkeepers "
            "filled the public gallery in protest.",
            "In sport, the Harbor City rowing club won two gold medals at the regional championships, and the "
            "women's football team moved to the top of the league after a late goal against Northport. The "
            "marathon route for next spring was published, and it will cross the river twice for the first time.",
            "The weather was mild for the season, with sunshine most days and a light breeze off the sea. "
            "Forecasters expect the first autumn storms next week, and the harbour master reminded boat owners to "
            "check their moorings and to clear drains on the quays before the rain arrives.",
            "Coming up: the library's Sunday opening trial begins, the Bridge Street bakery throws its fiftieth "
            "birthday party, and the maritime museum opens an exhibition of timbers from the old pier found "
            "during the tram works.",
            "Readers also wrote in about the cycle path along the river, which is still closed at the old "
            "gasworks; the council says it will reopen before Christmas once the new bridge deck has been tested.",
        ],
    },
    2: {
        "lang": "en",
        "title": "The week in Harbor City",
        "byline": "By the Harbor Daily desk",
        "section": "City",
        "paragraphs": [
            "Storms dominated the headlines this week. Gusts of more than one hundred kilometres an hour battered "
            "the coast on Thursday night, flooding basements in the lower town and closing the harbour swimming "
            "area after its pontoon was torn loose. Emergency crews worked through the night, and the clean-up of "
            "the promenade is expected to take until the end of the month.",
            "Schools in the hill villages closed for a day when a landslide blocked the only road, and pupils "
            "were taught online. The regional government promised money for a second access road, a demand that "
            "residents have been making for more than twenty years, but gave no date for the work to start.",
            "Good news came from the hospital, where a new children's ward opened with twenty beds, a playroom "
            "and rooms where parents can stay overnight. The ward was paid for partly by a fundraising campaign "
            "that collected donations from schools, sports clubs and hundreds of small businesses.",
            "Prices at the weekly market rose again, with apples and potatoes noticeably more expensive after a "
            "wet summer. Traders said customers were buying smaller amounts and shopping more carefully, and "
            "several stallholders asked the council to lower the fees for pitches during the winter months.",
            "Next week: the winter timetable for trams and buses takes effect, the council debates the sea wall "
            "plan, and the lantern walk volunteers hold their first rehearsal in the community garden.",
            "The fire brigade thanked the volunteers who filled sandbags on Thursday evening and reminded "
            "residents that the flood warning service sends alerts by text message to anyone who registers with "
            "their postcode. Several streets in the lower town were without power for a few hours.",
        ],
    },
}
