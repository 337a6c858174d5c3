"""The fixed list of words that may follow a number as its unit (`72 clips`, `5 cm`, `3 hours`).

Why a fixed list: a word after a number is dropped only if it names what is measured or
counted. Any other word may change the value (`18 million`, `5 dozen`, `3 halves`, `2 times`,
`18 squared`) or join an expression (`5 and x`), and reading such a reply as the bare number
would pay for a wrong answer. Scale words are not units: `numbers` applies them (`SCALES`);
a power word right after a number (`18 squared`) is arithmetic left undone, as `7 + 9` is,
and like everything not listed here makes the text not a number.

Two parts:
- `MEASURES`: units of length, area, volume, mass, time, speed, temperature, energy, data
  and money, with their common abbreviations, singular and plural.
- `COUNTED`: plural nouns of counted things, taken once from the GSM8K and MATH training
  solutions (the plural nouns their worked answers put after a number or a number and one
  word, "ways", "integers", "arrangements"; both MIT licensed), without the words that
  change a value (`halves`, `quarters`, `dozens`, `doubles`, `times`, `powers`, `plus`,
  `minus`, `equals`) and verbs, and the irregular plurals (`children`, `sheep`, `teeth`).
  Their singulars count too (`1 apple`).

A unit may have up to two words of three letters or more before it that say which things
are counted (`5 tennis balls`, `5 red roses`), unless one of them is a value word
(`is_value_word`: `3 halves apples`, `25 pi square units`, `5 sixteenths inch`), and words
after it that say nothing of the number (`5 apples left`, `72 clips altogether`, `in
total`). An answer may also end in a comparative with no unit (`$15 more`, `3 times`).
"""

from __future__ import annotations

import re

SCALES = {
    "hundred": 100,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "k": 10**3,
}
"""Words that multiply the number before them by a power of ten: `18 million` is 18000000,
`$60K` is 60000. Not `dozen`: `92 dozen` is the product 92 x 12 left undone, as `92 \\times 12` is."""

_MEASURE_WORDS = """
millimeter millimeters millimetre millimetres centimeter centimeters centimetre centimetres meter
meters metre metres kilometer kilometers kilometre kilometres inch inches foot feet yard yards mile
miles acre acres hectare hectares liter liters litre litres milliliter milliliters millilitre
millilitres gallon gallons quart quarts pint pints cup cups ounce ounces pound pounds lbs lb gram
grams kilogram kilograms kilo kilos kgs milligram milligrams ton tons tonne tonnes tablespoon
tablespoons tbsp teaspoon teaspoons tsp second seconds sec secs minute minutes min mins hour hours hr
hrs day days week weeks month months year years decade decades century centuries night nights
mph kph kmh mpg degree degrees calorie calories watt watts kilowatt kilowatts volt volts joule joules
byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes terabyte terabytes dollar dollars
cent cents euro euros pound pounds yen yuan rupee rupees peso pesos pfennig pfennigs nickel nickels
dime dimes penny pennies usd eur gbp unit units lap laps step steps mile miles yrs
"""
_SHORT_UNITS = frozenset({
    "m", "g", "s", "h", "l", "L", "N", "V", "W", "J", "A", "Hz", "Pa", "cm", "mm", "km", "nm", "um", "kg",
    "mg", "ml", "mL", "cl", "dl", "ft", "yd", "mi", "lb", "oz", "hr", "ms", "kW", "kJ", "mV", "mA", "ha", "in",
    "C", "F", "yr", "st", "nd", "rd", "th",
})  # fmt: skip
"""Units of one or two letters, case as written. Any other word that short after a number
is a factor or a variable (`5x`, `5 e`, `5i`, `5k`, `2ab`), or a word such as "or". Not
here: `K` (`$60K` is 60 thousand, not 60 kelvin) and `am`/`pm` (9 a.m. and 9 p.m. are two
times of day, not 9 with a unit)."""
UNIT_PREFIXES = frozenset({"square", "sq", "cubic", "cu"})
"""Words that may come before a unit: `12 square feet`."""
UNIT_JOINERS = frozenset({"per", "a", "an", "each"})
"""Words that may join two units: `60 miles per hour`, `5 dollars an hour`."""
UNIT_SUFFIXES = frozenset({
    "squared", "cubed", "old", "left", "altogether", "total", "remaining", "apiece", "each", "overall", "combined",
    "in", "all",
})  # fmt: skip
"""Words that may follow a unit: `25 units squared`, `18 years old`, `5 apples left`, `in total`."""
COMPARATIVES = frozenset({
    "more", "less", "fewer", "farther", "further", "longer", "shorter", "taller", "older", "younger", "heavier",
    "lighter", "cheaper", "faster", "slower", "bigger", "smaller", "higher", "lower", "earlier", "later", "extra",
    "times",
})  # fmt: skip
"""Words that may end an answer to "how many more", "how much longer", "how many times":
`$15 more`, `3 miles farther`, `3 times` (a word after them, as in `3 times 4`, is not read)."""
MAX_MODIFIERS = 2
VALUE_WORDS = frozenset({
    "half", "halves", "third", "thirds", "quarter", "quarters", "fourth", "fourths", "fifth", "fifths", "sixth",
    "sixths", "seventh", "sevenths", "eighth", "eighths", "ninth", "ninths", "tenth", "tenths", "hundredth",
    "hundredths", "thousandth", "thousandths", "millionth", "millionths", "times", "double", "doubled", "twice",
    "triple", "tripled", "thrice", "fold", "plus", "minus", "over", "divided", "by", "of", "and", "or", "not", "than",
    "percent", "percentage", "squared", "cubed", "dozen", "dozens", "score", "scores", "gross", "grand", "hundred",
    "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "trillion", "k", "zero", "one",
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "twenty", "thirty",
    "forty", "fifty", "point", "negative", "square", "root", "power", "powers", "exponent", "factorial",
    "pi", "sqrt", "sin", "cos", "tan", "log", "ln", "exp", "lakh", "lakhs", "crore", "crores", "bn", "mn", "mil",
    "hundredfold", "thousandfold",
})  # fmt: skip
"""Words that may change a number's value or join it to another: never a unit's modifier.
Ordinal and fraction words (`sixteenths`, `twelfths`) and number words (`fifteen`) are
caught by their form too (`is_value_word`)."""
_VALUE_FORMS = re.compile(
    r"\w*(?:four|fif|six|seven|eigh|nin|ten|eleven|twelf|teen|tie|hundred|thousand|illion)ths?"  # ordinals, fractions
    r"|\w*teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|\w+fold|\w*illions?",  # number words, multipliers
    re.IGNORECASE,
)


def is_value_word(word: str) -> bool:
    """A word that may change a number's value: listed in `VALUE_WORDS`, or shaped like an
    ordinal, a fraction, a number word or a multiplier."""
    lowered = word.lower()
    return lowered in VALUE_WORDS or bool(_VALUE_FORMS.fullmatch(lowered))


COUNTED = frozenset(
    """
accessories accidents accounts acorns actors addresses administrators adults airplanes albums
alligators aloes amounts amulets animals answers antacids antibiotics antlers ants apartments
appetizers apples applications appointments apps aprons aquariums areas armchairs arms arrangements
arrows artichokes articles artifacts artworks asparagus athletes attendees audiobooks aunts
autobiographies avocados awards babies backpacks badges bagels baggies bags baguettes bales balloons
balls bananas bandages bands banks barrels barrettes bars baseballs basketballs baskets batches
bathrooms baths bats batteries beads beakers beams beans bearings bears beats beavers bedbugs
bedrooms beds bees beetles beignets belts benches berets berries bicycles bids bikes billboards
bills binders bins biographies birches birdhouses birds births biscuits bites bits blackberries
blackbirds blankets blisters blocks blondies blouses blueberries bluebirds boards boas boats
bollards bolts bones bonnets bookings bookmarks books bookshelves boots bottlecaps bottles bouquets
bowlers bowlfuls bowls boxcars boxes boxwoods boys bracelets braids branches breads breakfasts
breaks breaths bricks bridesmaids brochures broomsticks brothers brownies brunettes brushes bubbles
buckets bucks bugs builders buildings bulbs bunches bundles bunnies buns burgers burritos burrs
buses bushels bushes businesses butterflies buttons buyers cabinets cakes calls calves camels
cameras campers candies candles canes cans cantaloupes canvases cappuccinos caps capsules caramels
cardinals cards caricatures carnations carpenters carpets carriages carrots cars cartons cartridges
carts cases categories caterpillars cats cattle cavities ceilings cells centerpieces centers chains
chairs champions channels chapters characters charges cheerleaders cheesecakes cheeses cheetahs
chefs cherries chests chickens chicks children chipmunks chips chives chocolates choices chores
circles circuits citations citizens claims clamps clarinets classes classmates classrooms claws
clerks clients clippings clips cloaks clothes clotheslines clouds clovers cloves clowns clusters
coals coats cobs coconuts coffees coins collars collectors colleges collies collisions colors
combinations combos comics commutes compartments complaints computers condiments cones consonants
contacts containers contestants contracts conversions convertibles cookies coolers copies corners
corns cosmetics costs coughs counselors counters countries couples coupons courses cousins cows
crabs crackers crafts cranberries cranes crashes craters crates crayons creams credits crickets
croissants crops crosswalks croutons crows cubes cubs cucumbers cuffs cupcakes cups curlers curries
customers cuttlebones cycles daisies dancers dandelions daps daughters decks decorations deer deers
defenders deliveries demerits desks desserts devices diagonals diapers diaries dice digits dinners
dips discounts dishes dividers divisors doctors dogs dolls dolphins dominoes donations donuts doors
doses dots doughnuts doves drawings dreadnoughts dreams dresses drinks driveways drops drummers
drums dryers ducklings ducks dvds earnings earrings ears edges eels eggplants eggs elements
elephants emails employees emus enclosures engines ensembles entrees envelopes episodes erasers
errors espressos essays exams exercises expenses extras eyes faces factors families farmhands farms
farthings feathers feedings feeds fees feet females fences ferns fields figures figurines files
filets fillets fingernails fingers firecrackers firefighters fireflies fires fireworks fish fishes
flags flamingoes flashlights flats flavors fleas flies flights flips floats floors flowers flutes
flyers folders foldings followers footballs footprints forks forms fouls foxes frames friends fries
frisbees frogs fronds fruits funds galleries games gardenias gates geckos geese gels gems gemstones
geraniums gharials gifts gigs gingerbreads giraffes girls glasses glitches globes gloves gnomes
goals goats gorillas graders grades graduates grains granddaughters grandkids grandsons grapes
grasshoppers gratuities graves groceries groups guests guitars gumballs guns guppies gusts haircuts
hairs halls hamburgers handfuls hands handshakes hangers hardbacks hares hats hawks heads hearts
heights hens herrings hexagons highlighters hikes hills hirings hits hives holes homes honeydews
hoodies hoops hops horses horseshoes hospitals hotdogs households houses humans hushpuppies huskies
hydrangeas iguanas increments individuals infections ingredients inhabitants insects installments
instances instructions instructors instruments insults integers interruptions intersections
invitations islands issues items jackets jacks jaguars jars jays jeans jellybeans jellyfish jerseys
jewels jobs joggers jokes jugs jumpers jumps kangaroos kebabs kernels kettles keyboards keys kids
kindergartners kinds kisses kitchens kits kittens kiwis knacks knicks knives knobs knocks koalas
kunks ladders ladies lambs lamps laptops lasagnas lattes lawnmowers lawns layers layoffs leaves
legos legs leis lemons leopards lessons letters levels licks lids lightbulbs lighters lights lilacs
lilies limbs limes lines links lions lives lizards llamas loads loaves loggers logs lollipops losses
lovers lunches lychees macarons macaroons machines magazines maggots magnets magpies males managers
mangoes mangos maples marbles marigolds marines markers marks marshmallows mascots masks matchboxes
matches matchsticks mats meals meatballs meats medals melons members men meows messages mice
milkshakes millipedes minks minnows misses mistakes mittens mitts models monkeys monsters motorbikes
motorcycles mountains movies muffins mugs multiples mushrooms musicians nails napkins naps
necessities necklaces neighbors nephews nerds nests netbooks newborns newspapers noodles noses
notebooks notepads notes nougats novels nuggets numbers nurses nuts oaks oats objects offices oldies
omelets omelettes onions options oranges orchards orchids orcs orderings orders outcomes outfits
owls owners oxen oysters packages packets packs pages pails paintings paints pairs pallets pamphlets
pancakes pandas panels pans pansies pants papayas paperbacks paperclips papers paragraphs parents
parks parrots parsecs parsnips participants particles parts passengers passes pastries patches
patients patrons pauses paws paychecks payments peaches peanuts pearls pears pebbles pencils
penguins pens people peppers permits permutations persons pesetas petals pets petunias phones
photographs photos phrases pianists pickles picks pictures pieces pies pigeons piglets pigs pikes
piles pillows pills pineapples pinecones pines pins pitches pits pixels pizzas places planks
planters plants plates players plots plugs plums pockets pods poets pointers points poles polishes
pollywogs pomelos poodles pools popsicles portions possibilities postcards posters posts potatoes
pots pouches presents pretzels primes printers prints problems products professionals programs
progressions puffs pulls pumpkins pumps pupils puppies pups purchases purses pushups puzzles pythons
questions quiches quilts quizzes rabbits racers races racks racquets rahs raisins raspberries rats
reams rebates recipes records recoveries rectangles redwoods reflections relatives repacks reports
reps requests researchers residents residues restaurants results retrievers rhinestones rhinos
ribbons riddles rides ridges rings robes robins robots rocks rods rolls roofs roommates rooms
roosters roots roses rotations rounds rows ruffles rugs rungs runners sacks sacs sailboats sails
salads sales salmons salutations samples sandcastles sandwiches saplings sausages savings scallops
scarves schoolers schools scissors scoops scouts screams screens screws scrunchies seagulls
seashells seasons seats sections seedlings seeds segments seniors sentences sequences sequins series
servings sessions sets settings shampoos shares sharks sharpeners sheep sheets shells shelves shifts
shingles ships shirts shoes shoppers shorts shots showers siblings sides sightings signs singers
singles sips sisters sites situps sizes skates skeletons skips skirts skulls slabs slacks sleeves
slices slots smoothies snacks snails snakes snapdragons snowballs snowflakes soaps socks sodas
softballs soldiers solutions songs sonnets sons sounds sourdoughs souvenirs spaces sparklers
sparrows spears specialists species spiders spiderwebs spokes spools spoonfuls spoons sports spots
sprigs spruces squabs squads squares squats squirrels stables stacks stadiums staff stains stairs
stakes stalks stamps stanzas staplers stars stations statues steaks stems steps stickers sticks
stingrays stitches stockings stones stools stoplights stops stores stories strands strawberries
straws streams streetlights streets strings stripes strips strokes students stuffers stuffies
subjects subscribers subscriptions subsections substitutions suckers suggestions suitcases suits
sunflowers sunglasses supplements supplies surfers surveys swallows swans sweaters sweatshirts
sweets swirls systems tables tabs tacks tacos tadpoles tails tangerines tanks tapes tarantulas tarts
tasks tattoos taxes taxis teachers teacups teams tears teas techs teddies teenagers tees teeth
televisions tents terms terriers teslas tests tetras textbooks texts throws thumbs thumbtacks
tickets ticks ties tigers tiles tins tips tires tissues toads toddlers toenails toes tokens tomatoes
tools toothbrushes toothpicks toppings tops tosses touchdowns tourists towels towers toys tractors
trains trays treasures treats trees triangles tricks trikes trips trolls trombones trophies trouts
truckloads trucks truffles trumpets tubes tubs tulips tumblers turkeys turnips turns turtles twigs
twins umbrellas uncles unicorns uniforms upgrades urns users utensils vacations values vampires vans
vegetables vehicles vents vertices vessels vests vets vibrations videos viewers vines violins
visitors visits volleyballs volunteers voters votes vowels waiters walkers walks walls walnuts wands
washers washes watches watermelons waters ways weasels websites wedges weeds weekdays weekends
werewolves whales wheels whiskers whistlers whiteboards whoosits wicks widgets widths wights wigs
windows wings winners wipes wombats women words workers worksheets worms wrinkles yolks zebras zeros
zits zombies zucchinis
""".split()
)


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "oes")):
        return word[:-2]
    return word[:-1]


MEASURES = frozenset(_MEASURE_WORDS.split())
UNITS = frozenset(
    word for word in MEASURES | COUNTED | {_singular(word) for word in COUNTED} if not is_value_word(word)
) - {"cube", "root", "square", "zero"}
"""Every word (lower case, three letters or more) that may follow a number as its unit; no
word that may change its value (`7 zero`, `7 cube`, `7 root` are not 7 of something)."""
POWER_SUFFIXES = frozenset({"squared", "cubed"})
"""Suffixes that only a unit of measure takes (`25 units squared`, not `7 apples squared`)."""


def is_short_unit(word: str) -> bool:
    """A unit of one or two letters (`m`, `kg`): in a gold answer, a variable unless written as text."""
    return word in _SHORT_UNITS


def is_unit_word(word: str) -> bool:
    """One word of a unit: a listed unit (any case), or a listed short unit (case as written)."""
    return word in _SHORT_UNITS or (len(word) > 2 and word.lower() in UNITS)
