"""Word lists the rule typer reads: given names, name heads and the context words that say what a name names.

Written for agrag (no list copied from elsewhere): common given names of many languages, the words that end
organisation, place and event names, and the nouns and verbs around a name that give its type away. All lower
case; the typer compares case-folded words. Names that are also ordinary capitalised words (April, Grant, Mark,
Will, Rose, Summer...) are left out on purpose: seeing them says little.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


GIVEN_NAMES = _words(
    # English, Scottish, Irish, Welsh
    """
    aaron abigail adam adrian agnes aidan aileen alan alasdair alastair albert alec alex alexander alexandra
    alfie alfred alice alison alistair amanda amelia amy andrew andy angela angus ann anna anne annie anthony
    archie arthur ashley barbara barry beatrice ben benjamin bernard beth bethan betty bobby brenda brendan brian
    bridget bruce callum calum cameron carl carol caroline catherine cathy catriona charles charlie charlotte
    chloe chris christina christine christopher ciara cian claire clare colin colm conor craig dafydd daisy
    dale damian daniel danny darren david dean debbie deborah declan deirdre denise dennis derek diana diane
    dominic donald donna doris dorothy douglas duncan dylan eamon edith edward eileen eilidh elaine eleanor
    elizabeth ellen ellie emily emma eoin eric ethan eve evelyn ewan fergus fiona frances francis frank fraser
    freddie frederick gail gareth gary gavin geoffrey george georgina gerald gerard gillian glen gordon graham
    gregor gwen hamish hannah harold harriet harry hazel heather helen henry hugh iain ian imogen ingrid isaac
    isabel isabella isla jack jacob james jamie jane janet janice jason jean jenny jeremy jessica jill jim
    jimmy joan joanna joe john jonathan joseph josh joshua joyce judith julia julie justin karen kate katherine
    kathleen katie keith kelly kenneth kerry kevin kieran kirsty laura lauren leah lee leo leon lewis liam
    linda lindsay lisa lorna lorraine louise lucy luke lynn lynne mairi malcolm margaret maria marian marie
    marion martin mary matthew maureen megan melissa michael michelle mike moira molly morag muriel murray
    nancy naomi natalie neil niall nicholas nicola nigel noel nora norman oliver olivia oscar owen pamela
    patricia patrick paul pauline peter philip phoebe rachel ralph rebecca richard rhys robert robin roger
    ronald rory ross ruth ryan sally sam samuel sandra sarah scott sean seamus shane sharon sheila shona simon
    siobhan sophie stephen steven stuart susan suzanne tessa thomas timothy tom tony tracey trevor valerie
    vanessa victor victoria vincent walter wendy william yvonne zoe aoife orla niamh saoirse sinead roisin
    grainne eilis dougal euan ruaridh seonaid struan torquil ada marcus lucas mateo noah elijah aiden logan
    mason ava mia ella stella sophia camila sebastian theo ezra kai finn oskar emil axel hugo nico elias julian
    xavier tobias levi milo jasper silas rowan clara ida alma greta heidi frida elsa maja sara
    """
    # French, German, Dutch, Nordic
    """
    amelie anais antoine aurelie bastien benoit camille celine chantal clement delphine elodie emile etienne
    fabien florian francois genevieve guillaume helene jacques jean-luc jean-pierre julien laurent lucie manon
    marcel margot mathieu mathilde nathalie pascal pierre remi sebastien sylvie thierry yves andreas anke
    annika bernd birgit dieter dirk elke felix franz friedrich gerhard gunter hanna hans heike heinz helga
    jens jorg jurgen karl katrin klaus kurt lars lukas manfred matthias monika nils otto petra ralf sabine
    stefan sven torsten ulrich ulrike uwe wolfgang bram daan femke joost maarten pieter sanne anders astrid
    bjorn erik freya gustav henrik ingvar jonas kari karin kjell lena leif magnus mats nina olaf ole per
    rasmus sigrid solveig stig tove ulla
    """
    # Spanish, Portuguese, Italian
    """
    alejandro alvaro ana andrea andres antonio beatriz carla carlos carmen catalina cristina diego eduardo
    elena emilio enrique esteban fernando francisco gabriel gonzalo guillermo ignacio ines isabela javier jesus
    joana joao jorge jose juan julio luis luisa manuel marco marcos mariana mario marta miguel nuria pablo
    paula pedro rafael ramon raul ricardo roberto rodrigo santiago sergio sofia tomas vicente alessandro
    alessia chiara davide emanuele enrico fabio federica francesca giacomo gianluca giorgio giovanni giulia
    giuseppe lorenzo luca lucia marcello massimo matteo paolo riccardo roberta silvia stefano valentina
    """
    # Slavic, Baltic, Hungarian, Greek
    """
    agnieszka aleksandra andrzej anya boris dmitri dmitry dorota ewa igor irina ivan jakub jan jana jiri
    katarzyna kasia lech magda marek marta milan miroslav natalia oksana olga pavel piotr sasha sergei svetlana
    tatiana tomasz vladimir wojciech yuri zofia zsofia laszlo andras eszter katalin dimitris eleni giorgos
    kostas maria nikos sofia yannis
    """
    # Arabic, Turkish, Persian, Hebrew, African
    """
    ahmed ali amir amira aisha fatima hassan hussein ibrahim karim khalid layla leila mahmoud mohamed
    mohammed mustafa nadia omar rania salma samir tariq yasmin youssef zainab ayse emre mehmet elif arash
    dariush reza shirin avi david eitan noa tamar yael yosef adebayo amara chidi chinedu kwame kofi oluwaseun
    ngozi nkechi obinna tunde wanjiru thabo sipho zanele
    """
    # South Asian
    """
    aarav aditya amit anil anita anjali arjun deepa deepak divya gita kavita krishna lakshmi manish meera
    neha nikhil pooja prakash priya rahul raj rajesh rakesh ravi rekha rohan sanjay shreya sita sunil sunita
    suresh vijay vikram
    """
    # East and South-East Asian
    """
    akira haruka hiroshi kenji mei ming yuki yuko takashi naoko satoshi wei li jun hua xin jia lin yan hyun
    ji-woo ji-hoon min-jun seo-yeon soo-jin nguyen thanh linh anh
    """
)

# Words before a name that make it a person's; kept out of the name itself ("Dr. Okafor" is "Okafor").
PERSON_TITLES = _words("dr prof professor mr mrs ms miss mx sir dame lady lord rev revd fr sr")
# Words before a name that make it a vessel's; kept out of the name ("RV Shearwater" is "Shearwater").
VESSEL_PREFIXES = _words("rv mv hms uss ss fv rrs mts")

# The last word of an organisation's name (or the word before "of": "University of Lisdara").
ORGANIZATION_HEADS = _words(
    """
    ltd limited inc incorporated llc llp plc gmbh ag sa sarl bv nv ab as oy spa co corp corporation company
    companies institute institut instituto institution university universite universidad universita college
    school academy council fund foundation group trust agency authority society association federation union
    bank centre center observatory laboratory laboratories labs services systems technologies consulting
    consultancy consultants partners partnership instruments scientific engineering
    engineers bio biosciences genomics acoustics robotics dynamics analytics networks solutions industries
    enterprises holdings ventures capital media press publishing pharma pharmaceuticals energy motors airlines
    boatyard shipyard works marine survey surveys infirmary hospital clinic museum library archive archives
    gallery sinfonia orchestra ensemble choir club committee board department ministry commission
    directorate consortium alliance coalition cooperative collective studio studios brewery
    distillery bakery associates brothers sons firm
    """
)
# Two-word heads: "Marine Station" is an institution where "Station" alone may be a building.
ORGANIZATION_HEAD_PAIRS = _words("marine_station research_station field_station biological_station data_centre")

# The last word of a place's name, or the word before "of" ("Bay of Brévannes").
PLACE_HEADS = _words(
    """
    island islands isle isles bay point head harbour harbor port street st road rd lane avenue ave square
    place crescent terrace drive way close gardens river loch lough lake firth sound sea ocean strait channel
    estuary coast shore beach cove cape peninsula mountain mountains mount hill hills valley glen forest wood
    moor fell ridge park county shire city town village district region province state territory kingdom
    republic arms inn hotel tavern quay pier dock docks reef bank banks rock rocks skerry stack ness voe
    """
)
# The first word of a place's name ("Mount Kenya", "Isle of Skye", "Lake Geneva").
PLACE_FIRST_WORDS = _words("mount isle lake loch cape port fort saint st glen strath kirk")
# Names that are places on their own (continents, oceans, seas and a few regions).
PLACE_NAMES = _words(
    """
    europe asia africa america americas antarctica australia oceania arctic antarctic atlantic pacific
    mediterranean baltic caribbean scandinavia britain england scotland wales ireland france germany spain
    portugal italy norway sweden denmark finland iceland netherlands belgium switzerland austria poland greece
    canada mexico brazil chile argentina peru china japan korea india pakistan egypt kenya nigeria
    """
)

# The last word of an event's name, and the first word of a storm's.
EVENT_HEADS = _words(
    """
    symposium conference congress meeting meetings workshop workshops summit festival fair expo exhibition
    cruise expedition course seminar webinar lecture lectures forum games cup championship championships
    olympics tournament ceremony gala election strike war battle storm hurricane typhoon cyclone flood
    earthquake fire week day days
    """
)
EVENT_FIRST_WORDS = _words("storm hurricane typhoon cyclone tropical operation battle siege")

# Nouns that say what a name next to them names: "Skipper: Alasdair Munro", "Fiona Baird (lab manager)",
# "Carrick Island is an uninhabited island", "the Halyard CT-60 profiler".
PERSON_NOUNS = _words(
    """
    skipper mate captain master crew manager technician officer engineer director scientist researcher student
    postdoc professor lecturer fellow lead leader chair chairman chairwoman chairperson author investigator pi
    supervisor colleague founder owner ceo cto cfo president secretary treasurer analyst assistant
    administrator coordinator diver buddy custodian demonstrator volunteer intern editor reviewer employee
    mother father wife husband son daughter sister brother friend doctor nurse teacher instructor pilot
    skipper's
    """
)
ORGANIZATION_NOUNS = _words(
    """
    company consultancy firm contractor supplier workshop institute organisation organization agency charity
    manufacturer maker partner partners funder sponsor business startup vendor retailer distributor university
    college school publisher bank council department ministry group team boatyard shipyard
    """
)
PLACE_NOUNS = _words(
    """
    island village town city region area harbour harbor bay coast shore port county country capital river
    loch lake estuary mainland headland peninsula valley district suburb neighbourhood site
    """
)
PRODUCT_NOUNS = _words(
    """
    instrument instruments profiler profilers recorder recorders sensor sensors device devices tool tools
    software model vessel boat boats ship ships sequencer cytometer unit units logger loggers product products
    machine machines engine engines vehicle camera cameras microscope analyser analyzer probe probes app
    platform release version library package robot drone bus car van truck laptop phone
    """
)
EVENT_NOUNS = _words("conference symposium meeting workshop course cruise festival seminar storm event exhibition")

# Words after which a name is a place ("near Skerrin", "west of Eskholm"), strongly or weakly.
PLACE_PREPOSITIONS_STRONG = _words("near around outside across throughout towards toward beyond off")
PLACE_PREPOSITIONS_WEAK = _words("in at from to via into")
COMPASS_WORDS = _words("north south east west northeast northwest southeast southwest north-east north-west")

# Verbs right after a person's name ("Alasdair retires", "Élodie prefers email") or right before it ("ask Aoife").
PERSON_VERBS_AFTER = _words(
    """
    said says say told tells asked asks joined joins retired retires retiring wrote writes thinks thought
    wants wanted prefers preferred brings brought moved leads led supervises agreed agrees noted notes
    presented presents visited visits decided decides explained explains signs signed won emailed replied
    replies suggested suggests recommends recommended remains left leaves died was were
    """
)
PERSON_VERBS_BEFORE = _words("ask asked tell told email emailed thank thanks contact call phone met meet dear hi")
ORGANIZATION_VERBS_AFTER = _words(
    """
    builds built makes made sells sold supplies supplied manufactures manufactured issues issued provides
    provided employs hired hires funds funded sponsors sponsored operates operated acquired announced
    """
)
# Copulas between a name and what it is ("Kelpworks Engineering is a ... workshop").
COPULAS = _words("is was are were has been becomes became remains")
DETERMINERS = _words("a an the our their its his her my your this that one")

# Demonyms and languages ("the Chilean coast", "Norwegian groups"): names of no type here, whatever follows them.
DEMONYM_ENDINGS = ("ian", "ean", "ese", "ish", "ic")
DEMONYM_EXCEPTIONS = _words("atlantic pacific baltic arctic antarctic adriatic")
